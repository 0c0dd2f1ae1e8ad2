"""What the comment shows, worked out from the report: the cases in the order a reviewer needs them, each
failed condition in words, the repro line, the deltas that decide.

The template (`comment.md.j2`) gets these as data and escapes every piece of text when it writes it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragjudge.metrics import registry
from ragjudge.report.case_block import CaseBlock
from ragjudge.report.comparison_block import DeltaBlock
from ragjudge.report.failure_groups import split_condition
from ragjudge.report.headline_block import FailureGroupBlock
from ragjudge.report.model import Report
from ragjudge.report.warning_kinds import WarningKind, by_kind
from ragjudge.report.workspace import relative_paths

GROUPS_SHOWN = 12
"""Conditions listed in the groups table; the rest are counted."""
IDS_PER_GROUP = 5
CALIBRATION = "judge calibration "
"""How the calibration warnings begin (`calibrate.fingerprint`): the comment puts them in its footer."""
CHANGE_WORDS = {
    "regression": "regression",
    "still_failing": "still failing",
    "new": "new case",
    "not_comparable": "not compared",
    "baseline_flaky": "flaky on main",
    "judge_split": "judge undecided",
}
_SAFE_URL = re.compile(r"^https?://[^\s()<>\[\]`]+$")


@dataclass(frozen=True)
class Group:
    number: int
    condition: str
    count: int
    ids: tuple[str, ...]


@dataclass(frozen=True)
class Cell:
    """One failed condition in a case's row: its group's number and what is the case's own."""

    group: int
    """The group's number in the groups table; 0 when the table does not show it (`own` is then the whole
    condition as written)."""
    shared: str
    own: str


def groups(blocks: Sequence[FailureGroupBlock]) -> list[Group]:
    """The conditions more than one case failed on, numbered for the rows; a condition of one case is written out
    in its row alone."""
    shared = [g for g in blocks if len(g.cases) > 1]
    return [Group(n, g.condition, len(g.cases), tuple(g.cases[:IDS_PER_GROUP])) for n, g in enumerate(shared, start=1)]


def cells(case: CaseBlock) -> list[Cell]:
    """The case's conditions in words, each once (a conversation's turns may repeat one): a row never names a
    group by its number, which the reader would have to look up screens above."""
    out: list[Cell] = []
    for text in case.failed_conditions:
        cell = Cell(0, split_condition(text).shared, score_words(text))
        if cell not in out:
            out.append(cell)
    return out


_SCORE = re.compile(
    r"^(?P<turn>turns? \d+(?: to \d+)?: )?(?P<metric>(?:judge|criteria)\.[\w.\-]+) (?P<value>\d+(?:\.\d+)?) "
    r"(?P<op><=|>=|<|>) (?P<threshold>\d+(?:\.\d+)?)(?P<rest>.*)$",
    re.DOTALL,
)
_NEEDS = {"<": "at least", "<=": "more than", ">": "at most", ">=": "less than"}
"""The rule a broken comparison broke, in words: `2 < 3` broke `>= 3`, which needs at least 3."""


def score_words(text: str) -> str:
    """`judge.grounding 2 < 3: the 24-hour figure …` as `grounding 2/5 (needs at least 3): the 24-hour figure …`:
    a judge's 1-5 score says its scale, and the rule says what it needs; any other condition as written."""
    match = _SCORE.match(text)
    if match is None:
        return text
    spec = registry.lookup(match["metric"])
    if spec is None or spec.unit != "score":
        return text
    name = match["metric"].removeprefix("judge.").replace("criteria.", "criterion ", 1)
    needs = f"needs {_NEEDS[match['op']]} {match['threshold']}"
    return f"{match['turn'] or ''}{name} {match['value']}/5 ({needs}){match['rest']}"


def ordered(cases: Sequence[CaseBlock]) -> tuple[list[CaseBlock], list[CaseBlock]]:
    """(the failing cases this change is about, those already failing on the baseline).

    Regressions first, then new cases, then the rest (not compared, flaky on main, or no baseline); within each,
    the cases whose definition changed first, then report order. Still-failing cases go in the second list.
    """
    bad = [c for c in cases if c.status != "pass" and c.review != "pending"]  # pending review: its own section
    rank = {"regression": 0, "new": 1}

    def key(c: CaseBlock) -> tuple[int, int]:
        changed = bool(c.baseline and c.baseline.case_changed)
        return rank.get(str(c.change), 2), 0 if changed or c.change == "new" else 1

    lead = sorted((c for c in bad if c.change != "still_failing"), key=key)
    return lead, [c for c in bad if c.change == "still_failing"]


def reading_order(cases: Sequence[CaseBlock]) -> list[CaseBlock]:
    """Every case as a reviewer reads them: this change's failing cases, those failing on the baseline too, then
    the passing ones (each in report order)."""
    lead, old = ordered(cases)
    pending = [c for c in cases if c.status != "pass" and c.review == "pending"]
    return [*lead, *old, *pending, *(c for c in cases if c.status == "pass")]


def change_words(case: CaseBlock) -> str:
    words = CHANGE_WORDS.get(str(case.change), "")
    runs = case.judge_runs
    if case.judge_split and runs is not None:
        # The votes, so a reviewer sees how undecided: `judge undecided (2 of 3 judgements fail it)`.
        verb = "pass" if case.status == "pass" else "fail"
        by_main = sum(v.get("by") == "main" for v in runs.votes if v.get("source") == "rubric")
        mains = ", one is main's" if by_main == 1 else f", {by_main} are main's" if by_main else ""
        words = (words or "judge undecided") + f" ({runs.agreeing} of {runs.runs} judgements {verb} it{mains})"
    if case.change == "regression" and runs is not None and any(v.get("source") == "pairwise" for v in runs.votes):
        # Decided with the pairwise judge's orders: say so (its reason is in the case's details).
        words += f" ({runs.decided_by})"
    if case.baseline is not None and case.baseline.case_changed:
        words += " · case changed"
    return words


_VARIABLE = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]{0,63}")


def probe_line(report: Report, case: CaseBlock) -> str:
    """`ragjudge probe --config ragjudge.yml --endpoint URL --cases cases/a.yaml --case r03`: the run's config, the
    endpoint it asked when the config alone would not reach it (`probe_options`), and the case's file."""
    words = ["ragjudge", "probe"]
    config = report.provenance.config
    if config and config != "(defaults)":
        words += ["--config", shlex.quote(relative_paths(config))]
    for option in report.provenance.probe_options or ():
        # `$VAR`: the variable holding a secret URL, expanded by the reader's shell (so in double quotes).
        words.append(f'"{option}"' if _VARIABLE.fullmatch(option) else shlex.quote(option))
    if case.file:
        words += ["--cases", shlex.quote(relative_paths(case.file))]
    words += ["--case", shlex.quote(case.id)]
    return " ".join(words)


def deciding(report: Report) -> tuple[list[DeltaBlock], list[DeltaBlock]]:
    """(the deltas that moved significantly or that a regression rule reads, the rest)."""
    cmp = report.comparison
    if cmp is None:
        return [], []
    figures = {f for r in cmp.rules if (f := registry.compared(r.metric)) is not None}
    shown = [d for d in cmp.deltas if d.significant or d.metric in figures]
    return shown, [d for d in cmp.deltas if d not in shown]


def warning_kinds(report: Report) -> tuple[list[WarningKind], list[WarningKind]]:
    """(the run's warnings by kind, the calibration notes for the footer); the error budget's reason, which opens
    the warnings, is left out: the headline says it."""
    rest = [w for w in report.warnings if w != report.error_reason]
    calibration = [w for w in rest if w.startswith(CALIBRATION)]
    return by_kind([w for w in rest if not w.startswith(CALIBRATION)]), by_kind(calibration)


def links(run_url: str | None, html: bool) -> list[tuple[str, str]]:
    """The workflow run, and its artifacts when an HTML report was written; none outside Actions."""
    if not run_url or not _SAFE_URL.match(run_url):
        return []
    out = [("workflow run", run_url)]
    if html:
        out.append(("HTML report (artifacts)", run_url + "#artifacts"))
    return out


def run_url_of(environ: Mapping[str, str]) -> str | None:
    """This workflow run's page, from `GITHUB_SERVER_URL`, `GITHUB_REPOSITORY` and `GITHUB_RUN_ID`; None outside
    Actions."""
    names = ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    server, repository, run_id = (environ.get(name, "").strip() for name in names)
    if server and repository and run_id:
        return f"{server.rstrip('/')}/{repository}/actions/runs/{run_id}"
    return None


# A later round's reasons start `round 2, `: the same orders, asked again (`judge.pairwise`'s rounds).
_ORDER = re.compile(r"^(?:round \d+, )?(main first|this run first): (A|B|tie)\b:? ?(.*)$", re.DOTALL)
_WHO = {
    ("main first", "A"): "main",
    ("main first", "B"): "pr",
    ("this run first", "A"): "pr",
    ("this run first", "B"): "main",
}
_SAID = {"main": "main's answer was better", "pr": "this PR's answer was better", "tie": "a tie"}


def pairwise_words(case: CaseBlock) -> str:
    """`main's answer was better: main's answer keeps the 30-day window …`: the judge's reason with its A and B
    named, so no reader works out which side was main; when the two orders disagree, each order's outcome."""
    pair = case.pairwise
    if pair is None or not pair.reasons:
        return ""
    said = []
    for reason in pair.reasons:
        match = _ORDER.match(reason)
        if match is None:
            said.append(("", reason))
            continue
        order, winner, why = match.groups()
        main_letter = "A" if order == "main first" else "B"
        names = {main_letter: "main's answer", ("B" if main_letter == "A" else "A"): "this PR's answer"}
        why = re.sub(r"\b([Aa])nswer ([AB])\b", lambda m, names=names: names[m[2]], why)
        said.append((_SAID[_WHO.get((order, winner), "tie")], why))
    outcomes = {who for who, _ in said}
    if len(outcomes) == 1 or len(said) == 1:
        who, why = said[0]
        return f"{who}: {why}" if who and why else (who or why)
    shown = ("with main's answer shown first", "with this PR's shown first")
    return "the two orders disagree: " + "; ".join(
        f"{where}, {who}" + (f" ({why})" if why else "") for where, (who, why) in zip(shown, said, strict=False)
    )
