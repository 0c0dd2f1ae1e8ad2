"""`compare_with_baseline`: comparability checks, the regression rules with their statistics, the verdict."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ragjudge import stats
from ragjudge.compare import compare_with_baseline
from ragjudge.config.loader import parse_config
from ragjudge.config.model import Config
from ragjudge.errors import ConfigError
from ragjudge.report.model import Report
from ragjudge.report.suite_block import RuleBlock
from tests.fakes.reports import MODEL, C, report

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)  # the baseline fixtures are from 2026-11-27 10:00: 3 days old


def config(regression: dict[str, str] | None = None, **extra: Any) -> Config:
    data: dict[str, Any] = {"gate": {}}
    if regression is not None:
        data["gate"]["regression"] = regression
    data.update(extra)
    return parse_config(data, "ragjudge.yml", Path("."))


def compare(now: Report, base: Report, cfg: Config | None = None) -> Report:
    return compare_with_baseline(now, base, cfg or config(), baseline_path=Path("main.json"), now=NOW)


def rule(result: Report, metric: str) -> RuleBlock:
    assert result.comparison is not None
    [found] = [r for r in result.comparison.rules if r.metric == metric]
    return found


def test_changes_counts_and_the_baseline_block() -> None:
    base = report([C("a"), C("b"), C("c", "fail"), C("d", "fail"), C("e", flaky=True), C("f", "error")])
    now = report(
        [C("a"), C("b", "fail"), C("c"), C("d", "fail"), C("e", "fail"), C("f"), C("g")],
        commit="fedcba9876",
        ref="refs/pull/4/merge",
    )
    result = compare(now, base)
    assert [(c.id, c.change) for c in result.cases] == [
        ("a", "still_passing"),
        ("b", "regression"),
        ("c", "fixed"),
        ("d", "still_failing"),
        ("e", "baseline_flaky"),
        ("f", "not_comparable"),
        ("g", "new"),
    ]
    assert result.cases[1].baseline is not None
    # A regression carries the baseline's answer, to read beside this run's.
    assert result.cases[1].baseline.model_dump() == {"status": "pass", "failed_conditions": [], "answer": "a"}
    assert result.cases[4].baseline is not None
    assert result.cases[4].baseline.model_dump() == {
        "status": "pass",
        "failed_conditions": [],
        "flaky": True,
        "k_of_n": "1 of 2 passed",
    }
    assert result.cases[6].baseline is None
    cmp = result.comparison
    assert cmp is not None
    assert cmp.baseline.model_dump() == {
        "commit": "0123456789abcdef",
        "ref": "refs/heads/main",
        "created_at": "2026-11-27T10:00:00+00:00",
        "age_days": 3.08,
        "path": "main.json",
    }
    assert cmp.counts == {
        "regression": 1,
        "fixed": 1,
        "still_failing": 1,
        "still_passing": 1,
        "flaky": 0,
        "baseline_flaky": 1,
        "judge_split": 0,
        "pending_review": 0,
        "new": 1,
        "removed": 0,
        "not_comparable": 1,
    }
    # The default rule: only `b` counts; the baseline-flaky `e` does not.
    assert rule(result, "newly_failing").model_dump() == {
        "scope": "regression",
        "metric": "newly_failing",
        "op": "<=",
        "threshold": 0.0,
        "value": 1.0,
        "passed": False,
        "reason": "newly_failing 1 > 0: b",
    }
    assert result.verdict == "fail"
    assert [r.metric for r in cmp.rules] == ["newly_failing"]


def test_a_flaky_pass_now_is_flaky_whatever_the_baseline_said() -> None:
    result = compare(report([C("a", flaky=True), C("b", flaky=True)]), report([C("a"), C("b", "fail")]))
    assert [c.change for c in result.cases] == ["flaky", "flaky"]
    assert result.verdict == "pass"


def test_no_regression_passes_and_the_comparison_is_idempotent() -> None:
    base = report([C("a"), C("b", "fail")])
    now = report([C("a"), C("b")])
    once = compare(now, base)
    assert once.verdict == "pass" and rule(once, "newly_failing").passed is True
    assert rule(once, "newly_failing").reason == "newly_failing 0 <= 0"
    assert compare(once, base) == once


def test_an_old_baseline_is_a_notice_naming_its_age_and_commit() -> None:
    base = report([C("a")])
    result = compare(report([C("a")]), base, config(baseline={"max_age_days": 2}))
    assert result.comparison is not None
    assert result.comparison.notices == [
        "the baseline (main@0123456) is 3 days old, older than baseline.max_age_days (2): changes merged since "
        "then count as this change's"
    ]
    assert compare(report([C("a")]), base).comparison.notices == []  # type: ignore[union-attr]
    # 3.08 days old (as the block rounds it) against a limit of exactly that: not older, no notice.
    at_limit = compare(report([C("a")]), base, config(baseline={"max_age_days": 3.08}))
    assert at_limit.comparison is not None and at_limit.comparison.baseline.age_days == 3.08
    assert at_limit.comparison.notices == []


def test_a_changed_case_set_compares_the_intersection_and_lists_the_rest() -> None:
    base = report([C("a"), C("b"), C("old-1", "fail"), C("old-2")])
    now = report([C("a"), C("b", "fail"), C("new-1", "fail")])
    result = compare(now, base, config({"newly_failing": "<= 5"}))
    cmp = result.comparison
    assert cmp is not None
    assert (cmp.new_cases, cmp.removed_cases) == (["new-1"], ["old-1", "old-2"])
    assert (cmp.counts["new"], cmp.counts["removed"]) == (1, 2)
    assert cmp.notices == [
        "the case set changed: compared on the 2 case(s) in both reports; new: new-1; removed: old-1, old-2"
    ]
    pass_rate = cmp.deltas[0]
    assert (pass_rate.metric, pass_rate.base, pass_rate.now, pass_rate.cases) == ("pass_rate", 1.0, 0.5, 2)


def test_different_rules_are_a_notice() -> None:
    result = compare(report([C("a")], rules_hash="x" * 64), report([C("a")]))
    assert result.comparison is not None
    assert result.comparison.notices == [
        "the case or suite rules differ from the baseline's: a case may pass or fail because of the rules, "
        "not the endpoint"
    ]


def test_a_different_judge_makes_judge_deltas_not_comparable_and_never_gated() -> None:
    other = {**MODEL, "model": "gpt-4o"}
    base = report([C(f"c{i}", faithfulness=1.0, grounding=5) for i in range(30)], fingerprint=MODEL)
    now = report([C(f"c{i}", faithfulness=0.2, grounding=1) for i in range(30)], fingerprint=other)
    cfg = config({"faithfulness_delta": ">= -0.02", "judge.grounding_delta": ">= -0.3"})
    result = compare(now, base, cfg)
    cmp = result.comparison
    assert cmp is not None
    reason = "the judge differs from the baseline's: model gpt-4o-mini -> gpt-4o"
    assert (cmp.judge_comparable, cmp.judge_not_comparable_reason) == (False, reason)
    assert cmp.notices == [f"judge-based deltas are not comparable and not gated: {reason}"]
    faith = next(d for d in cmp.deltas if d.metric == "faithfulness")
    assert (faith.comparable, faith.delta, faith.base, faith.now) == (False, None, 1.0, 0.2)
    assert faith.reason == f"not comparable: {reason}"
    assert rule(result, "faithfulness_delta").passed is None
    assert rule(result, "faithfulness_delta").reason == f"faithfulness_delta not gated: not comparable: {reason}"
    assert rule(result, "judge.grounding_delta").passed is None
    assert result.verdict == "pass"


def test_prompt_changes_and_a_baseline_without_provenance() -> None:
    changed = {**MODEL, "prompt_hash": "0" * 64, "temperature": 0.7}
    result = compare(report([C("a", faithfulness=1.0)], fingerprint=changed), report([C("a")], fingerprint=MODEL))
    assert result.comparison is not None
    assert result.comparison.judge_not_comparable_reason == (
        "the judge differs from the baseline's: the judge prompts changed, temperature 0.0 -> 0.7"
    )
    old = report([C("a")], provenance=False)  # a schema-1 report from before provenance
    result = compare(report([C("a")]), old)
    cmp = result.comparison
    assert cmp is not None
    assert cmp.judge_not_comparable_reason == (
        "the baseline records no judge fingerprint (written by a ragjudge without provenance)"
    )
    assert (cmp.baseline.commit, cmp.baseline.age_days) == (None, 3.08)  # its age from generated_at


def test_a_significant_faithfulness_drop_fails_and_a_noisy_one_does_not() -> None:
    base = [C(f"c{i}", faithfulness=1.0) for i in range(30)]
    cfg = config({"faithfulness_delta": ">= -0.02"})
    dropped = compare(report([C(f"c{i}", faithfulness=0.7) for i in range(30)]), report(base), cfg)
    assert rule(dropped, "faithfulness_delta").passed is False
    assert rule(dropped, "faithfulness_delta").reason == (
        "faithfulness_delta -0.300 < -0.020, significant (p < 0.001, below 0.05)"
    )
    assert dropped.verdict == "fail"
    delta = next(d for d in dropped.comparison.deltas if d.metric == "faithfulness")  # type: ignore[union-attr]
    assert delta.p_value == stats.wilcoxon_signed_rank([-0.3] * 30)
    assert delta.ci_low == delta.ci_high == pytest.approx(-0.3)
    # Two of thirty cases lost a claim: over the line on average, but not significant.
    noisy = [C(f"c{i}", faithfulness=0.5 if i < 2 else 1.0) for i in range(30)]
    result = compare(report(noisy), report(base), cfg)
    assert rule(result, "faithfulness_delta").passed is True
    assert rule(result, "faithfulness_delta").reason == (
        "faithfulness_delta -0.033 < -0.020 but not significant (p 0.500, not below 0.05): not blocking"
    )
    assert result.verdict == "pass"


def test_pass_rate_delta_uses_mcnemar() -> None:
    base = report([C(f"c{i}") for i in range(40)])
    now = report([C(f"c{i}", "fail" if i < 10 else "pass") for i in range(40)])
    result = compare(now, base, config({"pass_rate_delta": ">= -0.02"}))
    delta = result.comparison.deltas[0]  # type: ignore[union-attr]
    assert (delta.metric, delta.base, delta.now, delta.delta) == ("pass_rate", 1.0, 0.75, -0.25)
    assert delta.p_value == stats.mcnemar_exact(10, 0) == 2 * 0.5**10
    assert delta.significant is True and delta.ci_low is not None and delta.ci_low < -0.25 < (delta.ci_high or 0)
    assert delta.test == "exact McNemar test on 10 discordant of 40 paired cases; paired bootstrap interval"
    assert rule(result, "pass_rate_delta").reason == (
        "pass_rate_delta -0.250 < -0.020, significant (p 0.002, below 0.05)"
    )
    assert result.verdict == "fail"


def test_significance_is_configurable() -> None:
    base = report([C(f"c{i}") for i in range(20)])
    now = report([C(f"c{i}", "fail" if i < 3 else "pass") for i in range(20)])  # McNemar p = 0.25
    strict = config(
        {"pass_rate_delta": ">= -0.02"}, gate={"regression": {"pass_rate_delta": ">= -0.02"}, "significance": 0.3}
    )
    assert rule(compare(now, base, strict), "pass_rate_delta").passed is False
    assert rule(compare(now, base, config({"pass_rate_delta": ">= -0.02"})), "pass_rate_delta").passed is True


def test_latency_and_cost_ratios() -> None:
    base = report([C(f"c{i}", latency=100.0 + i, cost=0.01) for i in range(40)])
    slower = report([C(f"c{i}", latency=2 * (100.0 + i), cost=0.01) for i in range(40)])
    cfg = config({"p95_latency_ratio": "<= 1.2", "cost_ratio": "<= 1.25"})
    result = compare(slower, base, cfg)
    lat = rule(result, "p95_latency_ratio")
    assert (lat.passed, lat.value) == (False, 2.0)
    assert lat.reason == "p95_latency_ratio 2.00 > 1.20, significant (95% interval 2.00 to 2.00 excludes 1)"
    assert rule(result, "cost_ratio").passed is True and rule(result, "cost_ratio").reason == "cost_ratio 1.00 <= 1.25"
    deltas = {d.metric: d for d in result.comparison.deltas}  # type: ignore[union-attr]
    assert (deltas["p95_latency_ms"].base, deltas["p95_latency_ms"].now) == (
        137.0,
        274.0,
    )  # the 38th of 40 (nearest rank)
    assert deltas["p95_latency_ms"].p_value is None and deltas["p95_latency_ms"].kind == "ratio"
    assert (deltas["cost_usd"].base, deltas["cost_usd"].now) == pytest.approx((0.4, 0.4))
    # Three slow outliers (the p95 itself is one): over the line, but the interval includes 1, so it does not block.
    outlier = report([C(f"c{i}", latency=100.0 + i + (400 if i >= 37 else 0), cost=0.01) for i in range(40)])
    result = compare(outlier, base, cfg)
    lat = rule(result, "p95_latency_ratio")
    assert lat.passed is True and "but not significant" in lat.reason and "includes 1" in lat.reason


def test_the_judge_cost_ratio_compares_the_judges_bill_with_mains() -> None:
    """Issue 42: the regression view compares the judge's cost too (a pricier model, rejudges switched on)."""
    base = report([C(f"c{i}", judge_calls=1, judge_cost=0.002) for i in range(40)])
    dearer = report([C(f"c{i}", judge_calls=3, judge_cost=0.006 + 0.0001 * (i % 3)) for i in range(40)])
    result = compare(dearer, base, config({"judge_cost_ratio": "<= 1.5"}))
    found = rule(result, "judge_cost_ratio")
    assert (found.passed, found.value) == (False, pytest.approx(3.04875))
    assert found.reason.startswith("judge_cost_ratio 3.05 > 1.50, significant (95% interval 3.0")
    [delta] = [d for d in result.comparison.deltas if d.metric == "judge_cost_usd"]
    assert (delta.base, delta.now) == pytest.approx((0.08, 0.2439))
    assert delta.reason == "judge cost $0.0800 -> $0.2439: ratio 3.05 (95% interval 3.04 to 3.06; significant)"
    same = compare(base, base, config({"judge_cost_ratio": "<= 1.5"}))
    assert rule(same, "judge_cost_ratio").reason == "judge_cost_ratio 1.00 <= 1.5"
    # Unknown (an unpriced model) is never 0: not gated, saying why.
    unpriced = report([C(f"c{i}", judge_calls=1, judge_cost=None) for i in range(40)])
    found = rule(compare(unpriced, base, config({"judge_cost_ratio": "<= 1.5"})), "judge_cost_ratio")
    assert (found.passed, found.value) == (None, None)
    assert found.reason == "judge_cost_ratio not gated: not comparable: no case has its judge cost in both reports"


def test_a_rule_on_a_figure_with_no_data_is_shown_not_gated() -> None:
    result = compare(report([C("a")]), report([C("a")]), config({"cost_ratio": "<= 1.25"}))
    found = rule(result, "cost_ratio")
    assert (found.passed, found.value) == (None, None)
    assert found.reason == "cost_ratio not gated: not comparable: no case has its endpoint cost in both reports"
    assert result.verdict == "pass"


def test_the_verdict_keeps_absolute_failures_and_errors() -> None:
    failed_rule = RuleBlock(
        scope="suite",
        metric="pass_rate",
        op=">=",
        threshold=1.0,
        value=0.5,
        passed=False,
        reason="pass_rate 0.50 < 1.00",
    )
    now = report([C("a"), C("b", "fail")], verdict="fail", suite_rules=[failed_rule])
    assert compare(now, report([C("a"), C("b", "fail")])).verdict == "fail"
    errored = report([C("a", "error")], verdict="error")
    assert compare(errored, report([C("a")])).verdict == "error"


def test_unknown_regression_metrics_are_bad_input() -> None:
    with pytest.raises(ConfigError) as info:
        compare(report([C("a")]), report([C("a")]), config({"latency_delta": "<= 1"}))
    assert info.value.message == (
        "ragjudge.yml: gate.regression.latency_delta: unknown regression metric 'latency_delta'"
    )
    assert (
        info.value.tip is not None and "judge.<dimension>_delta" in info.value.tip and "newly_failing" in info.value.tip
    )
    with pytest.raises(ConfigError, match=re.escape("gate.regression.newly_failing: cannot parse rule 'none'")):
        compare(report([C("a")]), report([C("a")]), config({"newly_failing": "none"}))


def test_the_p95_ttft_ratio() -> None:
    base = report([C(f"c{i}", ttft=100.0 + i) for i in range(40)])
    slower = report([C(f"c{i}", ttft=3 * (100.0 + i)) for i in range(40)])
    result = compare(slower, base, config({"p95_ttft_ratio": "<= 1.5"}))
    found = rule(result, "p95_ttft_ratio")
    assert (found.passed, found.value) == (False, 3.0)
    assert found.reason == "p95_ttft_ratio 3.00 > 1.50, significant (95% interval 3.00 to 3.00 excludes 1)"
    deltas = {d.metric: d for d in result.comparison.deltas}  # type: ignore[union-attr]
    assert (deltas["p95_ttft_ms"].base, deltas["p95_ttft_ms"].now, deltas["p95_ttft_ms"].kind) == (
        137.0,
        411.0,
        "ratio",
    )
    assert deltas["p95_ttft_ms"].reason.startswith("p95 time to first token 137 ms -> 411 ms: ratio 3.00")


def test_no_streamed_reply_leaves_the_ttft_ratio_out_and_a_rule_on_it_not_gated() -> None:
    plain = report([C("a")])
    assert "p95_ttft_ms" not in {d.metric for d in compare(plain, plain).comparison.deltas}  # type: ignore[union-attr]
    found = rule(compare(plain, plain, config({"p95_ttft_ratio": "<= 1.5"})), "p95_ttft_ratio")
    assert (found.passed, found.value) == (None, None)
    assert found.reason == (
        "p95_ttft_ratio not gated: not comparable: no case has its p95 time to first token in both reports"
    )


def test_ten_new_cases_are_listed_whole_and_eleven_with_a_count() -> None:
    base = report([C("a")])
    ten = compare(report([C("a")] + [C(f"n{i}") for i in range(10)]), base).comparison
    assert ten is not None and ten.notices == [
        "the case set changed: compared on the 1 case(s) in both reports; new: n0, n1, n2, n3, n4, n5, n6, n7, n8, n9"
    ]
    eleven = compare(report([C("a")] + [C(f"n{i}") for i in range(11)]), base).comparison
    assert eleven is not None and eleven.notices[0].endswith("n7, n8, n9 and 1 more")


def test_the_regressions_list_holds_the_regressions_only() -> None:
    base = report([C("a"), C("b"), C("c", "fail")])
    cmp = compare(report([C("a"), C("b", "fail"), C("c")]), base).comparison
    assert cmp is not None and [r.id for r in cmp.regressions] == ["b"]
