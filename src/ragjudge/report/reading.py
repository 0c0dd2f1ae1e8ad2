"""Reading a saved report back: the one reader of report files (`merge`, `--baseline`, `comment`, the action).

A report file is input from outside (a shard's job, an artifact of another run), so it is bounded and
checked before anything computes with it: at most `MAX_REPORT_BYTES`, nested at most `MAX_DEPTH` deep,
every number finite and within `MAX_MAGNITUDE`, every field of its type (no `"12"` for 12), latencies and
counts not negative, and the provenance's time a time. Any failure is bad input (exit 2) naming the file and
the field.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ragjudge.endpoint.decoding import MAX_DEPTH, TooDeep, loads_bounded
from ragjudge.errors import CaseFileError
from ragjudge.metrics.names import COST_USD, FAITHFULNESS, JUDGE_COST_USD, LATENCY_MS, TTFT_MS
from ragjudge.repofiles.bounded import Bound, read_bounded
from ragjudge.report.model import Report
from ragjudge.report.provenance_block import ProvenanceBlock
from ragjudge.safetext import clean_data

MAX_REPORT_BYTES = 50 * 1024 * 1024
"""A report file (or a report inside an artifact) larger than this is refused: 10,000 cases take a few MB."""
MAX_MAGNITUDE = 1e15
"""No figure in a report is larger than this (1e15 ms is 31,000 years): beyond it a sum overflows to infinity."""

_JUDGE_FIGURES = (FAITHFULNESS, COST_USD, "calls", "cache_hits", "tokens")
_RUN_FIGURES = (LATENCY_MS, COST_USD, "judge_calls", "judge_tokens", JUDGE_COST_USD, "judge_cache_hits")
_BIAS_FIGURES = ("calls", "tokens", COST_USD)
_NOT_NEGATIVE = {LATENCY_MS, "calls", "cache_hits", "tokens", "judge_calls", "judge_tokens", "judge_cache_hits"}
_TEXT_PROVENANCE = (
    "ragjudge_version",
    "created_at",
    "git_commit",
    "git_ref",
    "case_set_hash",
    "rules_hash",
    "endpoint",
)


def load_report(path: Path) -> Report:
    """The report at `path`; raises CaseFileError (exit 2) naming the file, and the field when one is wrong."""
    # A saved report is outside text too: `"\ud800"` in it would fail the next write.
    data = clean_data(_read_json(path))
    if isinstance(data, dict) and data.get("kind") == "canary":
        raise CaseFileError(f"{path}: this is a canary report; use `ragjudge canary` to render it")
    problem = _odd_number(data)
    if problem is None:
        try:
            # Strict: a report ragjudge wrote has numbers where numbers go; "12" is a file someone edited.
            report = Report.model_validate(data, strict=True)
        except ValidationError as exc:
            problem = _type_problem(exc)
        else:
            problem = _saved_figures(report) or _created_at(report.provenance)
            if problem is None:
                return report
    where, what = problem
    raise CaseFileError(
        f"{path}: not a ragjudge report: {where}: {what}",
        tip="pass a report written by `ragjudge run --report` (or `merge`), unedited",
    )


def _read_json(path: Path) -> Any:
    raw = read_bounded(
        path,
        Bound(
            MAX_REPORT_BYTES,
            f"over {MAX_REPORT_BYTES // (1024 * 1024)} MB, more than any ragjudge report",
            tip="pass the file written by --report",
            missing="report file not found",
            missing_tip="pass the file written by --report",
        ),
    )
    try:
        return loads_bounded(raw.decode("utf-8"), MAX_DEPTH)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CaseFileError(f"{path}: not a JSON report ({exc})") from None
    except TooDeep as exc:
        raise CaseFileError(f"{path}: not a ragjudge report: {exc}") from None


def _odd_number(node: Any) -> tuple[str, str] | None:
    """The first NaN, infinity or number past `MAX_MAGNITUDE` anywhere in the data, and why."""
    stack: list[tuple[Any, str]] = [(node, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return path or "(the file)", f"{node} is not a number a report holds"
        if isinstance(node, int | float) and not isinstance(node, bool) and abs(node) > MAX_MAGNITUDE:
            return path or "(the file)", f"{node:g} is out of range (a report's figures are within ±{MAX_MAGNITUDE:g})"
        if isinstance(node, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((v, f"{path}.{i}" if path else str(i)) for i, v in reversed(list(enumerate(node))))
    return None


def _figure(value: Any, where: str, key: str) -> tuple[str, str] | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return where, f"expected a number or null, got {_json_type(value)}"
    if key in _NOT_NEGATIVE and value < 0:
        return where, f"{value:g} is negative"
    return None


def _figures(block: Any, keys: tuple[str, ...], where: str) -> tuple[str, str] | None:
    if not isinstance(block, dict):
        return None
    for key in keys:
        if (problem := _figure(block.get(key), f"{where}.{key}", key)) is not None:
            return problem
    return None


def _type_problem(exc: ValidationError) -> tuple[str, str]:
    """The first field of the wrong type, and why; the figures `merge` adds up and the provenance `compare` reads
    are worded as the reader of their once free-form blocks worded them."""
    first = exc.errors(include_url=False)[0]
    loc = [str(p) for p in first["loc"]]
    where = ".".join(loc)
    wanted = _wanted(loc)
    if wanted is None or first["type"] == "missing":
        return where, str(first["msg"])
    return where, f"expected {wanted} or null, got {_json_type(first['input'])}"


def _wanted(loc: list[str]) -> str | None:
    *path, key = loc or [""]
    if (path[-1:] == ["judge"] and key in _JUDGE_FIGURES) or (path[-2:-1] == ["runs"] and key in _RUN_FIGURES):
        return "a number"
    if path == ["provenance"] and key in _TEXT_PROVENANCE:
        return "a string"
    if path == ["provenance"] and key == "judge_fingerprint":
        return "an object"
    return None


def _negative(block: BaseModel, keys: tuple[str, ...], where: str) -> tuple[str, str] | None:
    for key in keys:
        value = getattr(block, key)
        if key in _NOT_NEGATIVE and value is not None and value < 0:
            return f"{where}.{key}", f"{value:g} is negative"
    return None


def _saved_figures(report: Report) -> tuple[str, str] | None:
    """The figures `merge` adds up (the judge's usage, each run's, the bias check's), and latencies, checked."""
    bias = (report.suite.model_extra or {}).get("position_bias")
    if (problem := _figures(bias, _BIAS_FIGURES, "suite.position_bias")) is not None:
        return problem
    for n, case in enumerate(report.cases):
        where = f"cases.{n}"
        trace = case.trace
        for key, value in (
            (LATENCY_MS, trace.latency_ms),
            (TTFT_MS, trace.ttft_ms),
            ("server_latency_ms", trace.server_latency_ms),
        ):
            if value is not None and value < 0:
                return f"{where}.trace.{key}", f"{value:g} is negative"
        latency = case.metrics.get(LATENCY_MS)
        if latency is not None and latency < 0:
            return f"{where}.metrics.latency_ms", f"{latency:g} is negative"
        if (problem := _negative(case.judge, _JUDGE_FIGURES, f"{where}.judge")) is not None:
            return problem
        for k, run in enumerate(case.runs):
            if (problem := _negative(run, _RUN_FIGURES, f"{where}.runs.{k}")) is not None:
                return problem
    return None


def _created_at(provenance: ProvenanceBlock) -> tuple[str, str] | None:
    """The provenance's time, which `compare` reads as a time."""
    created = provenance.created_at
    if created:
        try:
            datetime.fromisoformat(created)
        except ValueError:
            return "provenance.created_at", f"{created[:40]!r} is not an ISO 8601 time"
    return None


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"
