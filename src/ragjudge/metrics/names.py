"""Every metric's name, spelled once: the config's rule keys, the report's metric keys, the canary's rules.

Everything else refers to a metric by these constants or by its `MetricSpec` (`ragjudge.metrics.registry`);
`tests/metrics/test_registry.py` fails when a module outside this package spells one of these names.
"""

from __future__ import annotations

# One case (a conversation: its turns', by the spec's `over_turns`).
CONTEXT_RECALL = "context_recall"
CONTEXT_PRECISION = "context_precision"
LATENCY_MS = "latency_ms"
TTFT_MS = "ttft_ms"
COST_USD = "cost_usd"
FAITHFULNESS = "faithfulness"
ANSWER_CORRECTNESS = "answer_correctness"
REFERENCE_CONTRADICTIONS = "reference_contradictions"

# The suite.
PASS_RATE = "pass_rate"
REJECTION_ACCURACY = "rejection_accuracy"
TOOL_CONDITION_ACCURACY = "tool_condition_accuracy"
P50_LATENCY_MS = "p50_latency_ms"
P95_LATENCY_MS = "p95_latency_ms"
P99_LATENCY_MS = "p99_latency_ms"
P50_TTFT_MS = "p50_ttft_ms"
P95_TTFT_MS = "p95_ttft_ms"
JUDGE_ERROR_RATE = "judge_error_rate"
ENDPOINT_ERROR_RATE = "endpoint_error_rate"
JUDGE_COST_USD = "judge_cost_usd"

# Against the baseline.
NEWLY_FAILING = "newly_failing"
PAIRWISE_LOSS_RATE = "pairwise_loss_rate"
PAIRWISE_WORSE = "pairwise_worse"
PASS_RATE_DELTA = "pass_rate_delta"
FAITHFULNESS_DELTA = "faithfulness_delta"
ANSWER_CORRECTNESS_DELTA = "answer_correctness_delta"
TOOL_CONDITION_ACCURACY_DELTA = "tool_condition_accuracy_delta"
P95_LATENCY_RATIO = "p95_latency_ratio"
P95_TTFT_RATIO = "p95_ttft_ratio"
COST_RATIO = "cost_ratio"
JUDGE_COST_RATIO = "judge_cost_ratio"

# The canary against the stable deployment.
DISLIKE_RATE_RATIO = "dislike_rate_ratio"

# Families: one name per judge dimension or team criterion.
JUDGE_PREFIX = "judge."
CRITERIA_PREFIX = "criteria."
DELTA_SUFFIX = "_delta"
MEAN_SUFFIX = "_mean"
