"""The metric registry: one `MetricSpec` per metric, and the lookups every consumer uses.

The specs live by where a metric is made: `case_specs.py`, `suite_specs.py`, `comparison_specs.py`. Adding a
metric is its name (`names.py`), its spec there and, unless its `over_cases` says how the suite makes it, its
computation; the rules, the report, the comment, the comparison, the canary and the docs
read the rest from the spec.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ragjudge.metrics import case_specs, comparison_specs, suite_specs
from ragjudge.metrics import names as n
from ragjudge.metrics.families import JUDGE_DIMENSIONS
from ragjudge.metrics.spec import Mean, MetricSpec, Percentile, Scope, Total

SPECS: tuple[MetricSpec, ...] = case_specs.SPECS + suite_specs.SPECS + comparison_specs.SPECS
"""Every metric, in the order the docs' tables list them."""
__all__ = ["JUDGE_DIMENSIONS", "SPECS"]

_BY_NAME = {s.name: s for s in SPECS if not s.is_family()}
# The suffixed families first: `criteria.x_mean` is also a well-formed criterion's name.
_FAMILIES = sorted(
    ((re.compile(s.pattern), s) for s in SPECS if s.pattern is not None), key=lambda f: -len(f[0].pattern)
)


def of_scope(scope: Scope) -> Iterator[MetricSpec]:
    """The specs a rule of `scope` may name, in the registry's order."""
    return (s for s in SPECS if scope in s.scopes)


def lookup(name: str, scope: Scope | None = None) -> MetricSpec | None:
    """The spec of a metric (a family's member too: `judge.grounding`), in `scope` if given; None if unknown."""
    candidates = [_BY_NAME[name]] if name in _BY_NAME else [s for pattern, s in _FAMILIES if pattern.fullmatch(name)]
    return next((s for s in candidates if scope is None or scope in s.scopes), None)


def spec(name: str) -> MetricSpec:
    """The spec of a metric ragjudge itself names (a `KeyError` is a bug, not a user's mistake)."""
    found = lookup(name)
    if found is None:
        raise KeyError(name)
    return found


def member(name: str, scope: Scope | None = None) -> str | None:
    """The dimension or criterion a family metric names, as `scope` reads it: `criteria.asks_mean` is the
    criterion `asks` in the suite, `asks_mean` per case; None for a metric that is no family's."""
    found = lookup(name, scope)
    if found is None or found.pattern is None:
        return None
    match = re.fullmatch(found.pattern, name)
    return match.group(1) if match else None


def is_scored(name: str) -> bool:
    """A judge dimension's or a criterion's 1-5 score (per case, mean or delta)."""
    return name.startswith((n.JUDGE_PREFIX, n.CRITERIA_PREFIX))


def needs_judge(name: str) -> bool:
    """Whether a case rule on `name` makes the run call the judge."""
    found = lookup(name)
    return found is not None and "judge" in found.needs


def reads(name: str) -> frozenset[str]:
    """Every metric `name` is made of, itself included (`p95_latency_ratio` -> it, p95_latency_ms, latency_ms)."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        found = lookup(current)
        if found is None:
            continue
        if found.compares:
            todo.append(found.compares)
        if isinstance(found.over_cases, Percentile | Mean | Total):
            todo.append(found.over_cases.of)
    return frozenset(seen)


def mean_of(name: str) -> str:
    """The suite metric averaging a criterion: `criteria.x` -> `criteria.x_mean`."""
    return name + n.MEAN_SUFFIX


def compared(name: str) -> str | None:
    """The figure a regression rule reads: `pass_rate_delta` -> `pass_rate`, `judge.tone_delta` -> `judge.tone`;
    None for one that compares no figure (`newly_failing`)."""
    found = lookup(name, "regression")
    if found is None:
        return None
    if found.compares:
        return found.compares
    if found.is_family():
        return name.removesuffix(n.DELTA_SUFFIX)
    return None
