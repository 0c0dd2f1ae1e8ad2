"""Rendering the Markdown comment from a report with a Jinja template.

The template is trusted (shipped, or the team's own via --template); the data
is not, so it is only ever passed as values and escaped by `inline`.
"""

from __future__ import annotations

import functools
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
from ragjudge.report.changes import alert, delta_rows
from ragjudge.report.escape import code_id, html_text, inline
from ragjudge.report.figures import label, score
from ragjudge.report.model import Report
from ragjudge.safetext import clean_text

COMMENT_LIMIT = 60_000
"""Under GitHub's 65,536-character limit, with room for a marker and a header."""
LIST_CAP = 20
"""Fixed and flaky cases listed at most; the rest are counted."""


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
    env.globals.update(code_id=code_id, fmt=_fmt, metric=_METRIC_NAMES, score=score, version=__version__)
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
) -> str:
    """The comment, under `limit` characters however many cases fail.

    Failing cases are listed in report order; when all of them do not fit,
    the longest prefix that fits is shown and the rest are counted: the
    template gets `hidden` (table rows left out) and `undetailed` (cases
    without a `<details>` block) and says how many more are in the report.
    Regressions go last: details, then failing rows, then regression rows
    (`hidden_regressions`) give way.
    """
    text = load_template(template)
    source = str(template) if template else "built-in comment template"
    bad = [c for c in report.cases if c.status != "pass"]
    judge_name = report.judge_info.name()
    base: dict[str, Any] = {
        "report": report,
        "s": report.suite,
        "suite_rules": [r for r in report.rules if r.scope == "suite"],
        "case_rules": [r for r in report.rules if r.scope == "case"],
        "judge_name": judge_name,
        "lexical": report.judge_info.lexical,
        "report_path": report_path,
        # Judgements no rule needed still failed: shown, so an unscored judge is never invisible.
        "unscored_passing": [c for c in report.cases if c.status == "pass" and c.judge.unscored][:20],
        **_changes(report),
    }
    regressions = [c for c in report.cases if c.change == "regression"]

    def attempt(table_rows: int, details: int, regression_rows: int | None = None) -> str:
        shown_regressions = regressions if regression_rows is None else regressions[:regression_rows]
        context = {
            **base,
            "shown": bad[:table_rows],
            "detailed": bad[:details],
            "hidden": len(bad) - table_rows,
            "undetailed": len(bad) - details,
            "shown_regressions": shown_regressions,
            "hidden_regressions": len(regressions) - len(shown_regressions),
        }
        return _render(text, source, context)

    body = attempt(len(bad), len(bad))
    if len(body) <= limit:
        return body
    # Details go first (they are long), then table rows, then regression rows, each by binary search.
    details = _largest(lambda k: len(attempt(len(bad), k)) <= limit, len(bad))
    if details is not None:
        return attempt(len(bad), details)
    rows = _largest(lambda k: len(attempt(k, 0)) <= limit, len(bad))
    if rows is not None:
        return attempt(rows, 0)
    kept = _largest(lambda k: len(attempt(0, 0, k)) <= limit, len(regressions))
    if kept is not None:
        return attempt(0, 0, kept)
    note = "\n\n…comment truncated: see the JSON report.\n"
    return body[: limit - len(note)] + note


def _changes(report: Report) -> dict[str, Any]:
    """What the template shows about the baseline comparison (all empty without one)."""
    found = alert(report)
    cmp = report.comparison
    return {
        "alert": found.markdown() if found else "",
        "cmp": cmp,
        "base_label": inline(label(cmp.baseline), 80) if cmp else "",
        "deltas": delta_rows(report),
        "fixed": [c for c in report.cases if c.change == "fixed"],
        "flaky": [c for c in report.cases if c.flaky],
        "baseline_flaky": [c for c in report.cases if c.change == "baseline_flaky"],
        "list_cap": LIST_CAP,
    }


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
