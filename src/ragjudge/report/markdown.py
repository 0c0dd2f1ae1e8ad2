"""Rendering the Markdown comment from a report with a Jinja template.

The template is trusted (shipped, or the team's own via --template); the data
is not, so it is only ever passed as values and escaped by `inline`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import StrictUndefined, Template, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from ragjudge import __version__
from ragjudge.config.templatepath import check_readable
from ragjudge.errors import ConfigError
from ragjudge.metrics import names, registry
from ragjudge.metrics.spec import table_number
from ragjudge.report import comment_view
from ragjudge.report.bill import bill_words, cost_words
from ragjudge.report.causes import causes
from ragjudge.report.changes import alert, delta_rows, main_figures, paired_note
from ragjudge.report.escape import code_id, html_text, inline, prose
from ragjudge.report.figures import label, score
from ragjudge.report.headline import with_headline
from ragjudge.report.model import Report
from ragjudge.report.workspace import relative_paths
from ragjudge.safetext import clean_text

COMMENT_LIMIT = 60_000
"""Under GitHub's 65,536-character limit, with room for a marker and a header."""
LIST_CAP = 20
"""Fixed and flaky cases listed at most; the rest are counted."""
ID_ROOM_CAP = 32
"""Ids longer than this may wrap: the column would take the row's room."""
OPEN_REGRESSIONS = 5
"""Up to this many regressions, each one's before-and-after opens unfolded."""


def _fmt(metric: str, value: float | None) -> str:
    """A figure in the rules table and the footer, by the metric's spec (the column or the text gives the unit)."""
    return table_number(registry.lookup(metric), value)


_METRIC_NAMES = {key: value for key, value in vars(names).items() if key.isupper()}
"""`metric.P95_LATENCY_MS` in a template: the names as the registry spells them."""


def load_template(path: Path | None, default: str = "comment.md.j2") -> str:
    if path is None:
        return resources.files("ragjudge.report").joinpath("templates", default).read_text(encoding="utf-8")
    try:
        return check_readable(path, "template").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the comment template ({exc})") from None


def environment() -> SandboxedEnvironment:
    env = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
    env.filters["inline"] = inline
    env.filters["html_text"] = html_text
    env.filters["prose"] = prose
    env.globals.update(
        bill_words=bill_words,
        code_id=code_id,
        cost_words=cost_words,
        fmt=_fmt,
        metric=_METRIC_NAMES,
        score=score,
        version=__version__,
    )
    return env


def check_template(path: Path | None) -> str:
    """Read and parse a comment template now, so a bad one is exit 2 before any endpoint call; its text."""
    text = load_template(path)
    try:
        environment().parse(text)
    except TemplateError as exc:
        raise ConfigError(f"{path or 'built-in comment template'}: invalid comment template: {exc}") from None
    return text


@functools.lru_cache(maxsize=8)
def compiled(template_text: str) -> Template:
    """The template compiled once: the comment's size search renders it many times.

    `ragjudge run` compiles it on a spare thread while the endpoint calls run (`GateRequest.warm_up`).
    """
    return environment().from_string(template_text)


def _render(template_text: str, source: str, context: dict[str, Any]) -> str:
    try:
        # Safe for UTF-8 whatever a template or a report held: the comment, the summary and a post all use it.
        return clean_text(compiled(template_text).render(context))
    except TemplateError as exc:
        raise ConfigError(f"{source}: comment template failed: {exc}") from None


def render_comment(
    report: Report,
    template: Path | None = None,
    limit: int = COMMENT_LIMIT,
    report_path: str | None = None,
    links: Sequence[tuple[str, str]] = (),
    in_summary: bool = False,
) -> str:
    """The comment, under `limit` characters however many cases fail; `in_summary`: it is the job summary, whose
    overflow lines point at the step's `report` output (never at the summary itself, nor at a runner's path).

    It opens with the headline; then the conditions cases failed on, each once; then the failing cases this change
    is about (regressions first), those already failing on the baseline folded away, and a `<details>` block per
    case. When all of them do not fit, the longest prefix that fits is shown and the rest counted: details give way
    first (`undetailed`), then table rows (`hidden`). `links`: (name, URL) pairs shown beside the verdict (the
    workflow run, its artifacts).
    """
    text = load_template(template)
    source = str(template) if template else "built-in comment template"
    if report.headline is None:
        report = with_headline(report)  # a report saved before the headline was recorded
    assert report.headline is not None
    lead, old = comment_view.ordered(report.cases)
    bad = [*lead, *old]
    shown_groups = comment_view.groups(report.failure_groups)
    warnings, calibration = comment_view.warning_kinds(report)
    deltas_shown, deltas_rest = comment_view.deciding(report)
    every_delta = report.comparison.deltas if report.comparison else []
    rows = {id(d): r for d, r in zip(every_delta, delta_rows(report), strict=True)}
    base: dict[str, Any] = {
        "report": report,
        "s": report.suite,
        "headline": report.headline,
        "suite_rules": [r for r in report.rules if r.scope == "suite"],
        "case_rules": [r for r in report.rules if r.scope == "case"],
        "rules_on_main": main_figures(report),
        "judge_name": report.judge_info.name(),
        "lexical": report.judge_info.lexical,
        "report_path": relative_paths(report_path) if report_path else None,
        "links": list(links),
        "in_summary": in_summary,
        "id_room": _id_room(bad),
        "warning_kinds": warnings,
        "calibration": calibration,
        "groups": shown_groups,
        "causes": causes(report),
        "ids_per_cause": comment_view.IDS_PER_GROUP,
        "groups_shown": comment_view.GROUPS_SHOWN,
        "old": old,
        "bad_count": len(bad),
        "open_regressions": sum(c.change == "regression" for c in report.cases) <= OPEN_REGRESSIONS,
        "change_names": comment_view.CHANGE_WORDS,
        "cells": comment_view.cells,
        "change_words": comment_view.change_words,
        "pairwise_words": comment_view.pairwise_words,
        "probe": lambda c: comment_view.probe_line(report, c),
        "deltas": list(rows.values()),
        "deltas_shown": [rows[id(d)] for d in deltas_shown],
        "deltas_rest": [rows[id(d)] for d in deltas_rest],
        # Judgements no rule needed still failed: shown, so an unscored judge is never invisible.
        "unscored_passing": [c for c in report.cases if c.status == "pass" and c.judge.unscored][:20],
        **_changes(report),
    }

    def attempt(table_rows: int, details: int) -> str:
        shown = bad[:table_rows]
        context = {
            **base,
            # `shown`, `deltas` and the regression names are what teams' own templates were given before the
            # headline: kept, so such a template still renders.
            "shown": shown,
            "shown_regressions": [c for c in shown if c.change == "regression"],
            "hidden_regressions": sum(c.change == "regression" for c in bad[table_rows:]),
            "shown_lead": shown[: len(lead)],
            "shown_old": shown[len(lead) :],
            "detailed": bad[:details],
            "hidden": len(bad) - table_rows,
            "undetailed": len(bad) - details,
        }
        return _render(text, source, context)

    body = attempt(len(bad), len(bad))
    if len(body) <= limit:
        return body
    # Details go first (they are long), then table rows, each by binary search.
    details = _largest(lambda k: len(attempt(len(bad), k)) <= limit, len(bad))
    if details is not None:
        return attempt(len(bad), details)
    rows_kept = _largest(lambda k: len(attempt(k, 0)) <= limit, len(bad))
    if rows_kept is not None:
        return attempt(rows_kept, 0)
    note = "\n\n…comment truncated: see the JSON report.\n"
    return body[: limit - len(note)] + note


def _changes(report: Report) -> dict[str, Any]:
    """What the template shows about the baseline comparison (all empty without one)."""
    found = alert(report)
    cmp = report.comparison
    return {
        "alert": found.markdown() if found else "",
        "paired_note": paired_note(report),
        "cmp": cmp,
        "base_label": inline(label(cmp.baseline), 80) if cmp else "",
        "base_name": label(cmp.baseline) if cmp else "",  # for raw HTML (`<summary>`), through `html_text`
        "fixed": [c for c in report.cases if c.change == "fixed"],
        "flaky": [c for c in report.cases if c.flaky],
        "baseline_flaky": [c for c in report.cases if c.change == "baseline_flaky"],
        "advisory": [c for c in report.cases if c.advisory_conditions],
        "pending": [c for c in report.cases if c.review == "pending"],
        "worse_pairwise": [c for c in report.cases if c.pairwise is not None and c.pairwise.verdict == "worse"],
        "list_cap": LIST_CAP,
    }


def _id_room(cases: Sequence[Any]) -> str:
    """Figure spaces (U+2007, which do not break) after the `Case` heading, as wide as the longest id (a digit and
    a code glyph are about as wide): the column cannot be squeezed narrower than its ids, so `cs-003` never wraps
    to `cs-` / `003`, and the ids stay as written for a reader who copies one (nothing is put inside them)."""
    longest = min(max((len(c.id) for c in cases), default=0), ID_ROOM_CAP)
    return "&#8199;" * max(0, longest - len("Case") + 2)  # an entity: a cell's edge spaces are trimmed


def _largest(fits: Any, upper: int) -> int | None:
    """The largest k in [0, upper] with fits(k), assuming fits is monotone; None if not even 0."""
    if not fits(0):
        return None
    lo, hi = 0, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
