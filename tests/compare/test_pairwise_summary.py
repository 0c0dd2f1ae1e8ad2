"""The pairwise verdicts joined to the report (pinned, issue 40): each compared case's verdict, and the judge calls,
tokens, cache hits and cost of pairwise judging added to the suite's usage."""

from __future__ import annotations

from ragjudge.compare.pairwise_summary import summary, with_pairs
from ragjudge.judge.pairwise import PairVerdict
from tests.report.samples import sample_report


def test_pairwise_usage_is_added_to_the_suites() -> None:
    report = sample_report()
    assert report.suite.model_extra == {"judge_calls": 10}
    pairs = {
        "refund-01": PairVerdict(
            verdict="worse", consistent=True, reasons=("main first: A: x",), calls=2, tokens=300, cost_usd=0.0012
        ),
        "ship-01": PairVerdict(
            verdict=None,
            consistent=False,
            reasons=(),
            unscored="judge call failed",
            calls=1,
            tokens=50,
            cost_usd=0.0001234567,
            cache_hits=1,
        ),
    }
    joined = with_pairs(report, pairs)
    assert joined.suite.model_extra == {
        "judge_calls": 13,
        "judge_tokens": 350,
        "judge_cache_hits": 1,
        "judge_cost_usd": 0.001323,
    }
    cases = {c.id: c.pairwise for c in joined.cases}
    assert cases["refund-01"] is not None and cases["refund-01"].verdict == "worse"
    assert cases["ship-01"] is not None and cases["ship-01"].unscored == "judge call failed"
    assert cases["refund-02"] is None
    block = summary(joined.cases)
    assert block is not None and (block.compared, block.worse, block.unscored) == (1, 1, 1)
    assert with_pairs(report, {}) is report
