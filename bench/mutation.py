"""A mutation sample over the modules that decide verdicts: do the tests notice when a decision changes?

Run: python bench/mutation.py [--sample 250] [--seed 22] [--jobs 1] [--module PATH ...] [--json FILE] [--list]

Each mutant is one small change to one module's syntax tree, of the kinds that turn a decision around:

* a comparison's operator (`<` and `<=`, `>` and `>=`, `==` and `!=`, `in` and `not in`, `is` and `is not`);
* `and` and `or`; `+` and `-`, `*` and `/`; a `not` or a unary minus dropped;
* a number `n` made `n + 1`; `True` and `False` swapped; `break` made `continue`.

Strings are left alone (they are messages and keys, where a change is a wording, not a decision), and so are
annotations, decorators (`@dataclass(frozen=True)`) and `if TYPE_CHECKING:` blocks. The sites of every module
named are counted, a seeded sample of them is drawn, and each mutant is written into a private copy of `src/`
(the checkout is never touched) and judged by the module's own mirrored tests only (`TARGETS`), with `-x` and a
timeout: killed when they fail or time out, survived when they pass. The unmutated code must pass the same tests
first. Progress goes to stderr, one line a mutant.

Survivors are printed with their line, for a reader to judge each: equivalent (no input tells it apart), or a
behaviour no test pins. `--json FILE` writes every mutant and its outcome.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "ragjudge"

_CANARY = ("tests/canary/test_statistical.py", "tests/canary/test_decision.py", "tests/canary/test_point.py")
_COMPARE = ("tests/compare/test_deltas.py", "tests/compare/test_regression.py", "tests/compare/test_comparison.py")
_OFFLINE_REFERENCE = (
    "tests/judge/test_lexical_reference.py",
    "tests/judge/test_numerals.py",
    "tests/judge/test_negation.py",
    "tests/judge/test_reference.py",
)
_STREAM = (
    "tests/endpoint/test_events.py",
    "tests/endpoint/test_stream.py",
    "tests/endpoint/test_protocols.py",
    "tests/endpoint/test_receiving.py",
)
TARGETS: dict[str, tuple[str, ...]] = {
    "compare/deltas.py": _COMPARE,
    "compare/regression.py": _COMPARE,
    "compare/comparison.py": _COMPARE,
    "endpoint/refusal.py": ("tests/endpoint/test_refusal.py",),
    "endpoint/events.py": _STREAM,
    "endpoint/stream.py": _STREAM,
    "endpoint/protocols.py": _STREAM,
    "github/sticky.py": ("tests/github/test_sticky.py",),
    "gate/scoring.py": ("tests/gate/test_scoring.py",),
    "gate/repeat.py": ("tests/gate/test_repeat.py",),
    "gate/suite.py": ("tests/gate/test_suite.py",),
    "gate/checks.py": ("tests/gate/test_checks.py",),
    "gate/retrieval.py": ("tests/gate/test_retrieval.py",),
    "canary/statistical.py": _CANARY,
    "canary/decision.py": _CANARY,
    "canary/values.py": _CANARY,
    "canary/thresholds.py": _CANARY,
    "canary/point.py": _CANARY,
    "rules.py": ("tests/test_rules.py",),
    "judge/replies.py": ("tests/judge/test_replies.py", "tests/judge/test_reference.py"),
    "judge/reference.py": ("tests/judge/test_reference.py",),
    "judge/lexical_reference.py": _OFFLINE_REFERENCE,
    "judge/numerals.py": _OFFLINE_REFERENCE,
    "judge/negation.py": _OFFLINE_REFERENCE,
    "stats/significance.py": ("tests/stats/test_significance.py",),
}
"""The decision modules and their mirrored tests: a package's decision tests together where its modules share
them (the canary's point and statistical modes are both decided through `canary.decision`)."""

_COMPARE_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_BINOP_SWAP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
}
_SYMBOL = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.And: "and",
    ast.Or: "or",
}


@dataclass(frozen=True)
class Site:
    """One place a module can be mutated: the k-th mutable node in walk order, and what the change is."""

    module: str
    index: int
    line: int
    change: str


@dataclass(frozen=True)
class Outcome:
    site: Site
    status: str
    """killed, timeout or survived."""
    seconds: float
    source_line: str


def _skipped_nodes(tree: ast.AST) -> set[int]:
    """Nodes never mutated: annotations, decorators and `if TYPE_CHECKING:` bodies."""
    skipped: set[int] = set()

    def drop(node: ast.AST | None) -> None:
        if node is not None:
            skipped.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign | ast.arg):
            drop(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if not isinstance(node, ast.ClassDef):
                drop(node.returns)
            for decorator in node.decorator_list:  # `@dataclass(frozen=True)`: structure, not a decision
                drop(decorator)
        elif isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            drop(node)
    return skipped


def _changes(node: ast.AST) -> Iterator[str]:
    """The mutations one node offers, each a short description."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            swap = _COMPARE_SWAP.get(type(op))
            if swap is not None:
                yield f"compare {i}: `{_SYMBOL[type(op)]}` -> `{_SYMBOL[swap]}`"
    elif isinstance(node, ast.BoolOp):
        other = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield f"`{_SYMBOL[type(node.op)]}` -> `{_SYMBOL[other]}`"
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINOP_SWAP:
        yield f"`{_SYMBOL[type(node.op)]}` -> `{_SYMBOL[_BINOP_SWAP[type(node.op)]]}`"
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
        yield "`not` dropped" if isinstance(node.op, ast.Not) else "unary `-` dropped"
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            yield f"`{node.value}` -> `{not node.value}`"
        elif isinstance(node.value, int | float) and node.value + 1 != node.value:  # 1e21 + 1 is 1e21
            yield f"`{node.value!r}` -> `{node.value + 1!r}`"
    elif isinstance(node, ast.Break):
        yield "`break` -> `continue`"


def sites(module: str) -> list[Site]:
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    skipped = _skipped_nodes(tree)
    found: list[Site] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        for change in _changes(node):
            found.append(Site(module, len(found), getattr(node, "lineno", 0), change))
    return found


def mutate(module: str, index: int) -> str:
    """The module's source with its `index`-th mutation applied (the same walk order as `sites`)."""
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    skipped = _skipped_nodes(tree)
    count = 0
    for node in list(ast.walk(tree)):
        if id(node) in skipped:
            continue
        for k, _ in enumerate(list(_changes(node))):
            if count == index:
                _apply(node, k)
                return ast.unparse(ast.fix_missing_locations(tree))
            count += 1
    raise IndexError(f"{module} has no mutation {index}")


def _apply(node: ast.AST, k: int) -> None:
    if isinstance(node, ast.Compare):
        mutable = [i for i, op in enumerate(node.ops) if type(op) in _COMPARE_SWAP]
        i = mutable[k]
        node.ops[i] = _COMPARE_SWAP[type(node.ops[i])]()
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.BinOp):
        node.op = _BINOP_SWAP[type(node.op)]()
    elif isinstance(node, ast.UnaryOp):
        # `not x` -> `+bool(x)`, `-x` -> `+x`: a unary node still, so the parent's shape stays valid.
        if isinstance(node.op, ast.Not):
            node.operand = ast.Call(ast.Name("bool", ast.Load()), [node.operand], [])
        node.op = ast.UAdd()
    elif isinstance(node, ast.Constant):
        node.value = (not node.value) if isinstance(node.value, bool) else node.value + 1
    elif isinstance(node, ast.Break):
        node.__class__ = ast.Continue


def run_tests(src: Path, tests: list[str], timeout: float) -> tuple[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.monotonic()
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - started
    return ("survived" if done.returncode == 0 else "killed"), time.monotonic() - started


def _copy_src(into: Path) -> Path:
    shutil.copytree(ROOT / "src", into / "src", ignore=shutil.ignore_patterns("__pycache__"))
    return into / "src"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sample", type=int, default=250, help="mutants to draw over all modules (0: all)")
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--module", action="append", help="a module under src/ragjudge (default: TARGETS)")
    parser.add_argument("--json", type=Path, help="write every mutant and its outcome here")
    parser.add_argument("--list", action="store_true", help="list the drawn mutants, run nothing")
    args = parser.parse_args(argv)

    modules = args.module or list(TARGETS)
    tests = {m: [t for t in TARGETS.get(m, ()) if (ROOT / t).exists()] for m in modules}
    every = [s for m in modules if tests[m] for s in sites(m)]
    drawn = sorted(
        every if not args.sample or args.sample >= len(every) else random.Random(args.seed).sample(every, args.sample),
        key=lambda s: (s.module, s.index),
    )
    print(f"{len(every)} mutation sites in {len(modules)} modules; {len(drawn)} drawn (seed {args.seed})")
    if args.list:
        for s in drawn:
            print(f"{s.module}:{s.line} {s.change}")
        return 0

    with tempfile.TemporaryDirectory(prefix="ragjudge-mutants-") as tmp:
        copies = [_copy_src(Path(tmp) / f"w{j}") for j in range(args.jobs)]
        budget: dict[str, float] = {}
        for m in sorted({s.module for s in drawn}):
            status, seconds = run_tests(copies[0], tests[m], timeout=300)
            if status != "survived":
                print(f"the unmutated {m} fails its own tests ({' '.join(tests[m])}): fix that first", file=sys.stderr)
                return 2
            budget[m] = max(10.0, 3 * seconds + 5)

        def one(job: int, site: Site) -> Outcome:
            src = copies[job]
            target = src / "ragjudge" / site.module
            original = target.read_text(encoding="utf-8")
            try:
                target.write_text(mutate(site.module, site.index), encoding="utf-8")
                status, seconds = run_tests(src, tests[site.module], budget[site.module])
            finally:
                target.write_text(original, encoding="utf-8")
            line = original.splitlines()[site.line - 1].strip() if site.line else ""
            print(f"{status:8} {site.module}:{site.line} {site.change}", file=sys.stderr, flush=True)
            return Outcome(site, status, round(seconds, 2), line)

        outcomes: list[Outcome] = []
        with ThreadPoolExecutor(args.jobs) as pool:
            chunks = [drawn[j :: args.jobs] for j in range(args.jobs)]
            futures = [pool.submit(lambda j=j, c=c: [one(j, s) for s in c]) for j, c in enumerate(chunks)]
            for future in futures:
                outcomes.extend(future.result())
    outcomes.sort(key=lambda o: (o.site.module, o.site.index))

    for m in sorted({o.site.module for o in outcomes}):
        mine = [o for o in outcomes if o.site.module == m]
        killed = sum(o.status != "survived" for o in mine)
        print(f"{m}: {killed}/{len(mine)} killed")
    survivors = [o for o in outcomes if o.status == "survived"]
    killed = len(outcomes) - len(survivors)
    share = killed / len(outcomes) if outcomes else 0.0
    print(f"total: {killed}/{len(outcomes)} killed ({share:.1%}); survivors:")
    for o in survivors:
        print(f"  {o.site.module}:{o.site.line} {o.site.change}    {o.source_line}")
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
