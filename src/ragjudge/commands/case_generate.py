"""`ragjudge cases generate --corpus PATH --n N --out FILE`: cases written from the knowledge base by the judge's
model, to be reviewed before they gate.

Questions are spread over the documents by length (`cases.allocation`), one document per call
(`judge.generator`), each case checked against its document (`cases.candidates`) and against the others and
the case file for near-duplicates (`cases.clustering.near_duplicates`). The cases kept are appended to `--out`
with `source: synthetic`, `review: pending`, `golden_context_ids: [the document]`, and tags that say when and
by which model (`generated-YYYY-MM-DD`, `model-NAME`); the quote they came from is a comment above each. A
summary says what was generated and what was dropped, by reason and per document.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragjudge.cases.allocation import MIN_WORDS, allocate, gini, picks, size_of
from ragjudge.cases.caseset import validate
from ragjudge.cases.clustering import near_duplicates
from ragjudge.cases.corpus import EXAMPLE, MAX_DOCUMENT_CHARS, Document, load_corpus
from ragjudge.cases.saving import Addition, append, open_target
from ragjudge.cases.schema import CaseModel
from ragjudge.commands import case_generate_dry_run as dry_run
from ragjudge.config.loader import load_config
from ragjudge.errors import ConfigError, EvaluationError, UsageError
from ragjudge.outpaths import check_output_paths

if TYPE_CHECKING:
    from ragjudge.judge.generator import Kind

MAX_CASES = 1000
"""The most cases one `cases generate` asks for: each is a model's work and a person's review."""
NEAR_DUPLICATE = "near-duplicate"
"""The reason counted for a generated question that repeats an earlier one, or one of the case file's."""
BUDGET_TIP = (
    "the cases generated are written; raise --max-calls or --budget-usd (judge.max_calls, judge.budget_usd) and "
    "rerun for the rest (`--dry-run` says what it would take)"
)
OFFLINE_TIP = (
    "set judge.provider: openai, judge.model and judge.api_key: ${OPENAI_API_KEY} in ragjudge.yml "
    "(and judge.base_url for another OpenAI-compatible server), or pass --config with such a file"
)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def _positive(kind: type[float] | type[int]) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole ' if kind is int else ''}number") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text} is not above 0")
        return value

    return parse


def add_parser(tools: Any) -> None:
    g = tools.add_parser("generate", help="write cases from the knowledge base with the judge's model (pending review)")
    g.add_argument(
        "--corpus",
        required=True,
        metavar="PATH",
        help=f"JSONL of {{id, title, text}}, a folder of .md/.txt files, or `{EXAMPLE}` (the example service's)",
    )
    g.add_argument("--n", type=_count, required=True, metavar="N", help="questions the corpus answers")
    g.add_argument("--out", type=Path, required=True, metavar="FILE", help="case file to append the cases to")
    g.add_argument("--out-of-scope", type=_count, default=0, metavar="M", help="questions the corpus does not answer")
    g.add_argument("--conversations", type=_count, default=0, metavar="K", help="two-turn conversations")
    g.add_argument("--seed", type=int, default=0, help="which documents win a tie, and the model's seed (default 0)")
    g.add_argument("--config", type=Path, help="config file with the judge's model (default: ./ragjudge.yml)")
    g.add_argument("--date", type=date.fromisoformat, metavar="YYYY-MM-DD", help="date in the tags (default: today)")
    g.add_argument(
        "--max-calls", type=_positive(int), metavar="N", help="at most N model calls (overrides judge.max_calls)"
    )
    g.add_argument(
        "--budget-usd",
        type=_positive(float),
        metavar="USD",
        help="at most USD of model calls at judge.prices (overrides judge.budget_usd)",
    )
    g.add_argument(
        "--dry-run", action="store_true", help="read the inputs, ask nothing: print the calls, tokens and cost"
    )
    g.set_defaults(handler=handle)


@dataclass(frozen=True)
class Task:
    """What one call asks of one document."""

    document: Document
    kind: Kind
    count: int


def plan(docs: Sequence[Document], n: int, out_of_scope: int, conversations: int, seed: int) -> list[Task]:
    """What each document is asked for: `n` questions by size, the extras spread one a document."""
    sizes = [size_of(d.text) for d in docs]
    tasks = [Task(d, "questions", c) for d, c in zip(docs, allocate(sizes, n, seed), strict=True) if c]
    extras: tuple[tuple[Kind, int, int], ...] = (("out_of_scope", out_of_scope, 1), ("conversation", conversations, 2))
    for kind, m, offset in extras:
        counts = Counter(picks(sizes, m, seed + offset))
        tasks.extend(Task(docs[k], kind, c) for k, c in sorted(counts.items()))
    return tasks


def _clip(text: str, limit: int = 240) -> str:
    flat = " ".join(text.split())
    return flat[:limit] + ("…" if len(flat) > limit else "")


def case_data(group: Sequence[Any], kind: str, doc: Document, case_id: str, tags: list[str]) -> dict[str, Any]:
    """One generated case as written in the case file."""
    if kind == "conversation":
        # A list of its own for each turn: one list shared would be written as a YAML anchor and its alias.
        turns = [{"question": i.question, "expected": list(i.expected), "golden_context_ids": [doc.id]} for i in group]
        data: dict[str, Any] = {"id": case_id, "turns": turns}
    else:
        item = group[0]
        data = {"id": case_id, "question": item.question}
        if kind == "questions":
            data["expected"] = list(item.expected)
        data["golden_context_ids"] = [doc.id]
        if kind == "out_of_scope":
            data["should_answer"] = False
    extra = ["conversation"] if kind == "conversation" else ["out-of-scope"] if kind == "out_of_scope" else []
    data.update(source="synthetic", tags=[*tags, *extra], review="pending")
    return data


def handle(args: argparse.Namespace) -> int:
    check_output_paths((("--out", args.out),))
    asked = args.n + args.out_of_scope + args.conversations
    if asked == 0:
        raise UsageError("nothing to generate: --n, --out-of-scope and --conversations are all 0", tip="pass --n 30")
    if asked > MAX_CASES:
        raise UsageError(
            f"--n, --out-of-scope and --conversations ask for {asked} cases, more than the {MAX_CASES} one run writes",
            tip="every generated case waits for a person's review: generate a few hundred at a time",
        )
    config = load_config(args.config)
    if config.judge.provider != "openai":
        raise ConfigError(
            "cases generate needs a model to write cases, and the offline judge cannot generate "
            f"(judge.provider is {config.judge.provider!r})",
            tip=OFFLINE_TIP,
        )
    docs = load_corpus(args.corpus)
    target = open_target(args.out)
    existing = validate([(target.path, target.items)]).cases if target.items else ()
    # A generation is one budget (`judge.budget_usd`, `judge.max_calls`, or the flags), as a gate run is.
    ceilings = {"max_calls": args.max_calls, "budget_usd": args.budget_usd}
    judge = config.judge.model_copy(update={"seed": args.seed, **{k: v for k, v in ceilings.items() if v is not None}})
    tasks = plan(docs, args.n, args.out_of_scope, args.conversations, args.seed)
    if args.dry_run:
        asked_for = f"{args.n} questions, {args.out_of_scope} out of scope, {args.conversations} conversations"
        print("\n".join(dry_run.describe(dry_run.plan_generation(tasks, judge), judge, asked_for)))
        return 0
    from ragjudge.gate.spending import counting_budget, known_cost  # imported late, as the generator
    from ragjudge.judge.generator import Generator  # imported late: `cases stats` has no use for the judge

    warnings: list[str] = []
    # A refusal names where its ceiling was set: the flag that overrode the key, else the key.
    keys = (
        "--budget-usd" if args.budget_usd is not None else "judge.budget_usd",
        "--max-calls" if args.max_calls is not None else "judge.max_calls",
    )
    spend = counting_budget(judge, warnings, keys)
    generator = Generator(judge, spend=spend)
    with ThreadPoolExecutor(max_workers=max(1, min(judge.concurrency, len(tasks) or 1))) as pool:
        outcomes = list(pool.map(lambda t: generator.generate(t.document, t.kind, t.count), tasks))
    when: date = args.date or date.today()
    tags = [f"generated-{when.isoformat()}", f"model-{judge.model}"]
    groups = [(o, group) for o in outcomes for group in o.kept]
    asked = [" ".join(i.question for i in group) for _, group in groups]
    earlier = [" ".join(t.question for t in c.turns) if c.turns else c.question for c in existing]
    dropped: list[tuple[Any, str, str]] = [(o, d.reason, d.detail) for o in outcomes for d in o.drops]
    ids = {c.id for c in existing}
    kept: list[tuple[Any, dict[str, Any], str]] = []
    for (outcome, group), question, first in zip(groups, asked, near_duplicates(earlier, asked), strict=True):
        if first >= 0:
            dropped.append((outcome, NEAR_DUPLICATE, f"{question} repeats: {[*earlier, *asked][first]}"))
            continue
        k = len(kept) + 1
        while f"syn-{when:%Y%m%d}-{k:03d}" in ids:
            k += 1
        ids.add(f"syn-{when:%Y%m%d}-{k:03d}")
        data = case_data(group, outcome.kind, outcome.document, f"syn-{when:%Y%m%d}-{k:03d}", tags)
        CaseModel.model_validate(data)  # a generated case must be a valid case
        quotes = " | ".join(_clip(i.quote) for i in group)
        kept.append(
            (
                outcome,
                data,
                f"generated by {judge.model} on {when.isoformat()} from {outcome.document.id}; quote: {quotes}",
            )
        )
    if kept:
        append(target, [Addition(data, note) for _, data, note in kept])
    bill: list[str] = []
    if spend is not None:
        cost = known_cost(spend, judge, warnings)
        bill.append(f"model calls: {spend.calls}, cost " + ("unknown" if cost is None else f"${cost:.4f}"))
    _summary(args, docs, judge.model, outcomes, kept, dropped, [*bill, *(f"warning: {w}" for w in warnings)])
    if spend is not None and spend.exhausted is not None:
        raise EvaluationError(_ran_out(spend.reason(), spend.calls, dropped), tip=BUDGET_TIP)
    failed = [o for o in outcomes if o.failure]
    if failed:
        raise EvaluationError(
            f"{len(failed)} of {len(outcomes)} model call(s) failed: {failed[0].failure}",
            tip="the cases that came are written; rerun for the rest once the model answers",
        )
    return 0


def _ran_out(reason: str, calls: int, dropped: Sequence[tuple[Any, str, str]]) -> str:
    """The budget's reason, and the cases it left ungenerated, by document."""
    from ragjudge.judge.generator import NOT_GENERATED

    left = Counter(o.document.id for o, why, _ in dropped if why == NOT_GENERATED)
    where = ", ".join(f"{doc} {n}" for doc, n in left.items())
    return f"{reason} after {calls} model call(s); {left.total()} case(s) not generated" + (
        f" ({where})" if where else ""
    )


def _summary(
    args: argparse.Namespace,
    docs: Sequence[Document],
    model: str,
    outcomes: Sequence[Any],
    kept: Sequence[tuple[Any, dict[str, Any], str]],
    dropped: Sequence[tuple[Any, str, str]],
    bill: Sequence[str],
) -> None:
    by_kind = Counter(o.kind for o, _, _ in kept)
    askable = [d for d in docs if size_of(d.text) >= MIN_WORDS]
    print(
        f"generated {len(kept)} case(s) into {args.out} with {model} from {len(askable)} of {len(docs)} document(s): "
        f"{by_kind['questions']} questions, {by_kind['out_of_scope']} out of scope, "
        f"{by_kind['conversation']} conversations"
    )
    reasons = Counter(reason for _, reason, _ in dropped)
    print(
        f"dropped {len(dropped)}" + (": " + " · ".join(f"{r} {n}" for r, n in reasons.most_common()) if reasons else "")
    )
    lines = Counter(f"  {o.document.id}: {reason}: {_clip(detail)}" for o, reason, detail in dropped)
    for line, times in lines.items():
        print(line + (f" (×{times})" if times > 1 else ""))
    asked: Counter[str] = Counter()
    got: Counter[str] = Counter()
    lost: Counter[str] = Counter()
    for o in outcomes:
        asked[o.document.id] += o.asked
    for o, _, _ in kept:
        got[o.document.id] += 1
    for o, _, _ in dropped:
        lost[o.document.id] += 1
    print("per document: asked / kept / dropped")
    for d in docs:
        if asked[d.id]:
            print(f"  {d.id}: {asked[d.id]} / {got[d.id]} / {lost[d.id]}")
    short = [d.id for d in docs if size_of(d.text) < MIN_WORDS]
    if short:
        print(f"too short to ask about (under {MIN_WORDS} words): {', '.join(short)}")
    cut = [d.id for d in docs if d.cut]
    if cut:
        print(f"shown cut (over {MAX_DOCUMENT_CHARS:,} characters; questions from the start only): {', '.join(cut)}")
    retried = sum(o.retried for o in outcomes)
    if retried:
        print(f"asked again: {retried} case(s) with a point or quote not in the document, or not given at first")
    questions = Counter(o.document.id for o, _, _ in kept if o.kind == "questions")
    print(f"questions per document: Gini {gini([questions[d.id] for d in askable]):.2f}")
    for line in bill:
        print(line)
    if kept:
        print(f"Tip: review them with `ragjudge cases review {args.out}`: a pending case runs but gates nothing")
