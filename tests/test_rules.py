"""Threshold rules: parsing every operator, the metric vocabulary, errors that name the rule."""

from __future__ import annotations

import pytest

from ragjudge.errors import ConfigError, ExitCode
from ragjudge.rules import Rule, allowed, criterion_of, format_value, parse_rules


def test_case_metrics_are_the_documented_ones() -> None:
    assert {
        "context_recall",
        "context_precision",
        "latency_ms",
        "ttft_ms",
        "cost_usd",
        "faithfulness",
        "answer_correctness",
        "reference_contradictions",
        "judge.<dimension>",
        "criteria.<name>",
    } == set(allowed("case"))


def test_suite_metrics_are_the_documented_ones() -> None:
    assert {
        "pass_rate",
        "rejection_accuracy",
        "tool_condition_accuracy",
        "p95_latency_ms",
        "p50_latency_ms",
        "p99_latency_ms",
        "p95_ttft_ms",
        "p50_ttft_ms",
        "faithfulness",
        "judge_error_rate",
        "endpoint_error_rate",
        "cost_usd",
        "judge_cost_usd",
        "answer_correctness",
        "reference_contradictions",
        "criteria.<name>_mean",
    } == set(allowed("suite"))


@pytest.mark.parametrize(
    ("text", "op", "threshold"),
    [
        (">= 0.9", ">=", 0.9),
        ("> 0.9", ">", 0.9),
        ("<= 3000", "<=", 3000.0),
        ("< 3000", "<", 3000.0),
        ("== 1", "==", 1.0),
        (">=1.0", ">=", 1.0),
        ("  <=  .5  ", "<=", 0.5),
        ("< -2", "<", -2.0),
        ("<= 1e4", "<=", 10000.0),
        ("> +3.", ">", 3.0),
    ],
)
def test_parse_each_operator(text: str, op: str, threshold: float) -> None:
    (rule,) = parse_rules({"latency_ms": text}, "case", "gate.case")
    assert rule == Rule(scope="case", metric="latency_ms", op=op, threshold=threshold)


@pytest.mark.parametrize(
    ("op", "below", "equal", "above"),
    [
        (">=", False, True, True),
        (">", False, False, True),
        ("<=", True, True, False),
        ("<", True, False, False),
        ("==", False, True, False),
    ],
)
def test_holds_truth_table(op: str, below: bool, equal: bool, above: bool) -> None:
    rule = Rule("suite", "pass_rate", op, 0.5)
    assert (rule.holds(0.4), rule.holds(0.5), rule.holds(0.6)) == (below, equal, above)


def test_parse_keeps_order_scope_and_every_rule() -> None:
    rules = parse_rules(
        {"pass_rate": ">= 0.9", "rejection_accuracy": "> 0.8", "p95_latency_ms": "<= 3000"}, "suite", "gate.suite"
    )
    assert rules == [
        Rule("suite", "pass_rate", ">=", 0.9),
        Rule("suite", "rejection_accuracy", ">", 0.8),
        Rule("suite", "p95_latency_ms", "<=", 3000.0),
    ]


@pytest.mark.parametrize("dim", ["grounding", "relevance", "calibration", "citations", "tone"])
def test_judge_dimensions_are_case_metrics(dim: str) -> None:
    (rule,) = parse_rules({f"judge.{dim}": ">= 4"}, "case", "gate.case")
    assert rule.metric == f"judge.{dim}"


@pytest.mark.parametrize(
    ("scope", "key", "metric"),
    [
        ("case", "gate.case", "recall"),
        ("case", "gate.case", "judge.accuracy"),
        ("suite", "gate.suite", "p999_latency_ms"),
    ],
)
def test_unknown_metric_is_a_config_error_naming_it(scope: str, key: str, metric: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_rules({metric: ">= 1"}, scope, key)  # type: ignore[arg-type]
    assert info.value.message == f"{key}.{metric}: unknown {scope} metric {metric!r}"
    assert info.value.exit_code == ExitCode.BAD_INPUT
    # The tip lists what is allowed.
    assert info.value.tip == f"{scope} metrics are: {', '.join(sorted(allowed(scope)))}"  # type: ignore[arg-type]
    assert ("judge.<dimension>" in info.value.tip) == (scope == "case")


@pytest.mark.parametrize(
    ("scope", "metric", "message", "tip"),
    [
        (
            "suite",
            "context_recall",
            "gate.suite.context_recall: context_recall is a case metric, not a suite one",
            "move the rule under gate.case: each case must meet it, and the suite's pass_rate counts the cases "
            "that did",
        ),
        (
            "suite",
            "latency_ms",
            "gate.suite.latency_ms: latency_ms is a case metric, not a suite one",
            "move the rule under gate.case: each case must meet it, and the suite's pass_rate counts the cases "
            "that did",
        ),
        (
            "case",
            "pass_rate",
            "gate.case.pass_rate: pass_rate is a suite metric, not a case one",
            "move the rule under gate.suite: it is checked once, on the figure of the whole suite",
        ),
        (
            "suite",
            "pass_rate_delta",
            "gate.suite.pass_rate_delta: pass_rate_delta is a regression metric, not a suite one",
            "move the rule under gate.regression: it compares the run with the baseline's report",
        ),
    ],
)
def test_a_metric_of_another_table_says_where_it_belongs(scope: str, metric: str, message: str, tip: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_rules({metric: ">= 1"}, scope, f"gate.{scope}")  # type: ignore[arg-type]
    assert (info.value.message, info.value.tip) == (message, tip)
    assert info.value.exit_code == ExitCode.BAD_INPUT


@pytest.mark.parametrize("text", ["=> 0.9", "0.9", ">= abc", ">= 0.9 ms", "", ">=", "!= 1", ">= 1,5", "= 1"])
def test_unparsable_rule_is_a_config_error_naming_it(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_rules({"pass_rate": text}, "suite", "gate.suite")
    assert info.value.message == f"gate.suite.pass_rate: cannot parse rule {text!r}"
    assert info.value.exit_code == ExitCode.BAD_INPUT
    assert info.value.tip is not None and ">= > <= < ==" in info.value.tip


def test_non_string_rule_value_is_parsed_from_its_text() -> None:
    # YAML may hand over a number: it has no operator, so it cannot be a rule.
    with pytest.raises(ConfigError, match=r"^gate\.case\.latency_ms: cannot parse rule 10000$"):
        parse_rules({"latency_ms": 10000}, "case", "gate.case")  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("metric", "op", "threshold", "value", "expected"),
    [
        ("context_recall", ">=", 1.0, 0.5, "context_recall 0.500 < 1"),
        ("latency_ms", "<=", 10000, 12034.4, "latency_ms 12034 > 10000"),
        ("faithfulness", ">=", 0.8, 0.5, "faithfulness 0.500 < 0.8"),
        ("context_precision", ">", 0.5, 0.5, "context_precision 0.500 <= 0.5"),
        ("p95_latency_ms", "<", 3000, 3000.0, "p95_latency_ms 3000 >= 3000"),
        ("pass_rate", "==", 1, 0.75, "pass_rate 0.750 != 1"),
        ("cost_usd", "<=", 0.01, 0.0123, "cost_usd 0.0123 > 0.0100"),
        ("judge.grounding", ">=", 4, 2.0, "judge.grounding 2 < 4"),
        ("judge.tone", ">=", 4, 3.5, "judge.tone 3.50 < 4"),
    ],
)
def test_failure_reason_names_value_broken_comparison_and_threshold(
    metric: str, op: str, threshold: float, value: float, expected: str
) -> None:
    assert Rule("case", metric, op, float(threshold)).failure(value) == expected


def test_format_value() -> None:
    assert format_value("latency_ms", 999.6) == "1000"
    assert format_value("pass_rate", 1 / 3) == "0.333"
    assert format_value("cost_usd", 1.23456) == "1.2346"
    assert format_value("judge.relevance", 5.0) == "5"


def test_criterion_of_names_the_criterion_a_rule_reads() -> None:
    assert criterion_of("criteria.asks_for_order", "case") == "asks_for_order"
    assert criterion_of("criteria.asks_for_order_mean", "suite") == "asks_for_order"
    assert criterion_of("criteria.asks_for_order_delta", "regression") == "asks_for_order"
    assert criterion_of("criteria.asks_for_order", "suite") is None and criterion_of("faithfulness", "case") is None
