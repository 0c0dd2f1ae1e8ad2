"""The headline: why the gate blocked, what this change did and how far from green, worked out once.

"Blocked by 2 regressions (r03, r07); pass_rate 0.884 < 0.9, failing on main@abc1234 too (0.907 there). 5 more
cases must pass." A passing run's says how many passed and what this change fixed; an errored run's, why it errored.
The comment, the job summary, stdout and the HTML report open with the sentence; its figures are in the report
(`headline`), beside the cases grouped by the condition they failed on (`failure_groups`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.metrics.names import NEWLY_FAILING, PAIRWISE_LOSS_RATE, PAIRWISE_WORSE, PASS_RATE
from ragjudge.report.causes import causes
from ragjudge.report.failure_groups import failure_groups
from ragjudge.report.figures import label
from ragjudge.report.headline_block import HeadlineBlock
from ragjudge.report.model import Report
from ragjudge.report.suite_block import RuleBlock
from ragjudge.rules import Rule, format_value, holds

IDS_IN_SENTENCE = 5
COMMON_CAUSE_AT = 10
"""With this many failing cases or more, the headline names the condition most of them failed on."""
REASON_CHARS = 300


def with_headline(report: Report) -> Report:
    """The report with its `headline` and `failure_groups`."""
    return report.model_copy(update={"headline": headline_of(report), "failure_groups": failure_groups(report.cases)})


def headline_of(report: Report) -> HeadlineBlock:
    changes = {c.id: c.change for c in report.cases}
    new_failures = [i for i, change in changes.items() if change == "regression"]
    fixed = [i for i, change in changes.items() if change == "fixed"]
    pre_existing = [i for i, change in changes.items() if change == "still_failing"]
    failing = [r for r in report.rules if r.scope == "suite" and r.passed is False]
    on_main = _failing_on_main(report, failing)
    to_pass = cases_to_pass(report)
    parts = _Parts(report, new_failures, fixed, on_main, to_pass)
    return HeadlineBlock(
        sentence=parts.sentence(failing),
        new_failures=new_failures,
        fixed=fixed,
        pre_existing=pre_existing,
        rules_failing_on_main=[r.metric for r in on_main],
        cases_to_pass=to_pass,
    )


def cases_to_pass(report: Report) -> int | None:
    """The fewest more passing cases that make every failing pass-rate rule hold; None when none fails (or
    none can hold however many pass)."""
    total, passed = report.suite.cases, report.suite.passed
    needs = []
    for rule in report.rules:
        if rule.scope != "suite" or rule.metric != PASS_RATE or rule.passed is not False or not total:
            continue
        need = next(
            (k for k in range(total - passed + 1) if holds(rule.op, (passed + k) / total, rule.threshold)), None
        )
        if need is not None:
            needs.append(need)
    return max(needs) if needs else None


def _failing_on_main(report: Report, failing: Sequence[RuleBlock]) -> list[RuleBlock]:
    """The baseline's outcome of each rule failing now that failed on the baseline too (same metric, op and
    threshold: a rule the change tightened is this change's)."""
    if report.comparison is None:
        return []
    before = {(r.metric, r.op, r.threshold): r for r in report.comparison.baseline_rules if r.passed is False}
    return [before[key] for r in failing if (key := (r.metric, r.op, r.threshold)) in before]


def _ids(ids: Sequence[str]) -> str:
    more = len(ids) - IDS_IN_SENTENCE
    return ", ".join(ids[:IDS_IN_SENTENCE]) + (f" and {more} more" if more > 0 else "")


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _clip(text: str) -> str:
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"


class _Parts:
    """The sentence's pieces; the report's text (ids, reasons) goes in as is: each output escapes it."""

    def __init__(
        self,
        report: Report,
        new_failures: Sequence[str],
        fixed: Sequence[str],
        on_main: Sequence[RuleBlock],
        to_pass: int | None,
    ) -> None:
        self.report = report
        self.new_failures = new_failures
        self.fixed = fixed
        self.on_main = on_main
        self.to_pass = to_pass
        self.base = label(report.comparison.baseline) if report.comparison else None

    def sentence(self, failing: Sequence[RuleBlock]) -> str:
        report = self.report
        if report.verdict == "error":
            why = report.error_reason or (report.interrupted.reason if report.interrupted else None)
            text = _clip(why or "no case could be evaluated")
            return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")
        if report.verdict == "pass":
            return self._passed()
        return self._blocked(failing)

    def _passed(self) -> str:
        s = self.report.suite
        text = (
            f"{s.passed} of {s.cases} gating cases pass" if self._pending() else f"{s.passed} of {s.cases} cases pass"
        )
        text += " and every rule holds"
        if self.fixed:
            text += f"; {_count(len(self.fixed), 'case')} fixed against {self.base} ({_ids(self.fixed)})"
        if s.flaky_cases:
            text += f"; {_count(s.flaky_cases, 'case')} passed only after repeats"
        return text + self._worse_pairwise() + self._pending() + "."

    def _pending(self) -> str:
        """`; 4 cases pending review, not gating`: cases that ran but count toward no rule."""
        n = sum(c.review == "pending" for c in self.report.cases)
        return f"; {_count(n, 'case')} pending review, not gating" if n else ""

    def _worse_pairwise(self) -> str:
        """`; 2 of 3 changed answers judged worse than main@abc1234 (r03, r07)`: what thresholds do not see."""
        cmp = self.report.comparison
        if cmp is None or cmp.pairwise is None or not cmp.pairwise.worse:
            return ""
        if any(r.passed is False and r.metric in (PAIRWISE_LOSS_RATE, PAIRWISE_WORSE) for r in cmp.rules):
            return ""  # a failed pairwise rule already says it, each fact once
        worse = [c.id for c in self.report.cases if c.pairwise is not None and c.pairwise.verdict == "worse"]
        return (
            f"; {cmp.pairwise.worse} of {cmp.pairwise.compared} changed answers judged worse than {self.base} "
            f"({_ids(worse)})"
        )

    def _blocked(self, failing: Sequence[RuleBlock]) -> str:
        report = self.report
        old = {r.metric for r in self.on_main}
        regression_rules = report.comparison.rules if report.comparison else []
        causes = []
        if self.new_failures:
            edited = sum(1 for c in report.cases if c.change == "regression" and c.baseline and c.baseline.case_changed)
            what = f"{_count(len(self.new_failures), 'regression')} ({_ids(self.new_failures)})"
            # A regression in a case the change edited may be the case's doing, not the service's: said first.
            causes.append(what + (f", {edited} of them in cases this change edited" if edited else ""))
        new_rules = [r for r in failing if r.metric not in old]
        new_rules += [r for r in regression_rules if r.passed is False and r.metric != NEWLY_FAILING]
        if self.new_failures and any(r.metric == PASS_RATE for r in new_rules):
            # The regressions are why pass_rate fails: the count of cases to pass says the rest.
            new_rules = [r for r in new_rules if r.metric != PASS_RATE]
        causes += [_clip(_failure(r)) for r in new_rules]
        now = {r.metric: r for r in failing}
        before = [_on_main_too(now[r.metric], r, self.base) for r in self.on_main]
        if causes:
            text = "Blocked by " + "; ".join([*causes, *before])
        elif before:
            text = "Blocked by a rule already failing: " + "; ".join(before)
        else:
            text = "Blocked"
        undecided = [c.id for c in report.cases if c.change == "judge_split"]
        if undecided:
            text += f"; {_count(len(undecided), 'case')} judge undecided ({_ids(undecided)}): not regressions"
        new_cases = [c.id for c in report.cases if c.change == "new" and c.status != "pass"]
        if new_cases:
            text += f"; {_count(len(new_cases), 'new case')} failing ({_ids(new_cases)})"
        if self.fixed:
            text += f"; this change fixed {len(self.fixed)} ({_ids(self.fixed)})"
        # Short sentences, each fact once: how far from green, then the cause most failures share.
        sentences = [text + self._worse_pairwise() + self._pending()]
        if self.to_pass:
            sentences.append(f"{_count(self.to_pass, 'more case')} must pass")
        sentences += self._common_cause()
        return ". ".join(sentences) + "."

    def _common_cause(self) -> list[str]:
        """Where the reader starts when many cases fail: `Most failing cases share one cause: missing required
        detail: "order number" (210 of 300, 90 of them already failing on main@abc1234)`, or `120 of the 150
        failing cases come down to 4 causes` when no one cause explains most of them."""
        gating = [c for c in self.report.cases if c.status != "pass" and c.review != "pending"]
        found = causes(self.report)
        if len(gating) < COMMON_CAUSE_AT or not found:
            return []
        top = found[0]
        if 2 * len(top.cases) < len(gating):
            covered = len({c.id for k in found for c in k.cases})
            if 2 * covered < len(gating):
                return []
            share = f"All {len(gating)}" if covered == len(gating) else f"{covered} of the {len(gating)}"
            return [f"{share} failing cases come down to {len(found)} causes"]
        every = len(top.cases) == len(gating)
        share = f"All {len(gating)} failing cases share" if every else "Most failing cases share"
        count = "" if every else f"{len(top.cases)} of {len(gating)}"
        if top.pre_existing:
            old = f"{top.pre_existing} of them already failing on {self.base}"
            count = f"{count}, {old}" if count else old
        return [f"{share} one cause: {_clip(top.condition)}" + (f" ({count})" if count else "")]


def _on_main_too(now: RuleBlock, main: RuleBlock, base: str | None) -> str:
    """`pass_rate 0.925 < 0.98, failing on main@abc1234 too (0.974 there)`: this run's figure first, main's named
    as main's."""
    text = _failure(now) + f", failing on {base} too"
    if main.value is not None and now.value is not None and main.value != now.value:
        text += f" ({format_value(main.metric, main.value)} there)"
    return text


def _failure(rule: RuleBlock) -> str:
    """`pass_rate 0.884 < 0.9`: the rule broken, as its reason writes it (the reason for a rule with no value)."""
    if rule.value is None or rule.scope == "regression":
        return rule.reason
    return Rule(rule.scope, rule.metric, rule.op, rule.threshold).failure(rule.value)
