"""Recorded traces (`ragjudge run --traces FILE.jsonl`): judge what production already answered.

Each line is one recorded request: the case fields (`id`, `question`, and
optionally `expected`, `golden_context_ids`, `category`, `should_answer`,
`must_mention`, ...) beside the reply fields the endpoint returned (`answer`,
`refused`, `confidence`, `retrieved`/`sources`, `retrievedIds`, `latencyMs`,
`costUsd`). Latency rules then use the recorded latency, and the report says so; a
recorded `ttft_ms`/`ttftMs` (a streamed reply's time to its first token) is its TTFT.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragjudge.cases.case import Case
from ragjudge.cases.caseset import to_case
from ragjudge.cases.files import RawItem, read_items
from ragjudge.config.endpoint_config import EndpointConfig, ResponseMapping
from ragjudge.endpoint.decoding import non_finite
from ragjudge.endpoint.paths import dig
from ragjudge.endpoint.refusal import RefusalRules
from ragjudge.endpoint.reply import ReplyShapeError, parse_reply
from ragjudge.endpoint.result import EndpointResult
from ragjudge.errors import CaseFileError
from ragjudge.metrics import registry
from ragjudge.metrics.names import LATENCY_MS, TTFT_MS

_CASE_FIELDS = frozenset(
    {
        "id", "question", "expected", "golden_context_ids", "goldenContextIds", "category", "should_answer",
        "shouldAnswer", "must_mention", "mustMention", "must_not_mention", "mustNotMention", "source",
        "difficulty", "tags", "criteria", "tools",
    }
)  # fmt: skip


class RecordedSource:
    """Stands where the endpoint client stands, answering from the recording."""

    def __init__(self, replies: dict[str, EndpointResult]) -> None:
        self.replies = replies

    def render(self, case: Case) -> tuple[str, str | None]:
        return "recorded", None

    def call(self, case: Case, on_attempt: Callable[[dict[str, Any]], None] | None = None) -> EndpointResult:
        return self.replies[case.id]


def _latency(data: dict[str, Any], mapping: ResponseMapping) -> float | None:
    return _ms(data, ([mapping.latency_ms] if mapping.latency_ms else []) + [LATENCY_MS, "latencyMs"])


def _ms(data: dict[str, Any], keys: Sequence[str]) -> float | None:
    for key in keys:
        value = dig(data, key) if "." in key else data.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            return float(value)
    return None


def load_traces(
    path: Path,
    endpoint: EndpointConfig,
    need_latency: bool,
    sample: int | None = None,
    seed: int = 0,
) -> tuple[list[Case], RecordedSource]:
    mapping = endpoint.response
    rules = RefusalRules.from_config(endpoint.refusal)
    items = read_items(path)
    if not items:
        raise CaseFileError(f"{path}: no recorded traces", tip="one JSON object per line")
    if sample is not None and sample < len(items):
        items = sorted(random.Random(seed).sample(items, sample), key=lambda it: it.index)
    cases: list[Case] = []
    replies: dict[str, EndpointResult] = {}
    for item in items:
        data = item.data
        where = f"{path}:{item.line}" if item.line else f"{path}#{item.index + 1}"
        if not isinstance(data, dict):
            raise CaseFileError(f"{where}: expected a JSON object, found {type(data).__name__}")
        bad = non_finite(data)
        if bad is not None:  # NaN, Infinity or 1e999: a cost or latency rule would compare false in silence
            raise CaseFileError(
                f'{where}: field "{bad[0]}" is not a finite number', tip="record it as a number or null"
            )
        case_part = {k: v for k, v in data.items() if k in _CASE_FIELDS}
        case = to_case(path, RawItem(case_part, item.index, item.line))
        if case.id in replies:
            raise CaseFileError(f"{where}: duplicate trace id {case.id!r}", tip="give every trace its own id")
        latency = _latency(data, mapping)
        if latency is None and need_latency:
            raise CaseFileError(
                f"{where}: trace {case.id!r} has no latency_ms/latencyMs, and a latency rule needs it",
                tip="record the latency, or drop latency rules for --traces runs",
            )
        reply_part = {k: v for k, v in data.items() if k not in _CASE_FIELDS or k == "id"}
        try:
            trace = parse_reply(reply_part, mapping, latency if latency is not None else 0.0, rules)
        except ReplyShapeError as exc:
            raise CaseFileError(f"{where}: trace {case.id!r}: {exc}") from None
        ttft = _ms(data, (TTFT_MS, "ttftMs"))
        if ttft is not None:
            trace = dataclasses.replace(trace, ttft_ms=ttft)
        cases.append(case)
        replies[case.id] = EndpointResult(trace, None, 0, 0.0, 0.0, None)
    return cases, RecordedSource(replies)


def latency_rules(metrics: Sequence[str]) -> bool:
    """Whether a rule reads the reply's latency (its own, or a figure made of it)."""
    return any(LATENCY_MS in registry.reads(m) for m in metrics)
