"""Several samples of one judgement (`judge.samples`) made one verdict: the median per dimension, its
spread, and a failed sample left out with a note. Through the model judge against a loopback server."""

from __future__ import annotations

from pathlib import Path

from ragjudge.judge.interface import Claim, Judgement
from ragjudge.judge.samples import faithfulness_median, majority
from tests.fakes.openai_server import FakeOpenAI, Reply, queue
from tests.fakes.rag import make_case, make_trace
from tests.judge.openai_helpers import PASSAGES, LogSink, by_kind, claim, claims_json, kinds, make_judge, rubric_json

CASE = make_case("c1", "How long do refunds take?")
TRACE = make_trace("Refunds take 5 working days. Shipping is always free.", ids=list(PASSAGES), passages=PASSAGES)
TWO_CLAIMS = claims_json(
    claim("Refunds take 5 working days.", True, "p1", "p1: within 5 working days"),
    claim("Shipping is always free.", False, None, "p2: only over 99 yuan"),
)
ALL_SUPPORTED = claims_json(claim("Claim 0.", True, "p1"), claim("Claim 1.", True, "p1"))


def _judge(fake: FakeOpenAI, tmp_path: Path, **kw: object) -> Judgement:
    return make_judge(fake, tmp_path / "cache", **kw).judge(CASE, TRACE, LogSink())


def test_samples_take_the_median_per_dimension_and_report_the_spread(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.responder = by_kind(
        rubric=queue(
            Reply(content=rubric_json({"grounding": 3, "tone": 2}, {"grounding": "first"})),
            Reply(content=rubric_json({"grounding": 5, "tone": 2})),
            Reply(content=rubric_json({"grounding": 4, "tone": 5})),
        ),
        faithfulness=queue(
            Reply(content=TWO_CLAIMS),
            Reply(content=ALL_SUPPORTED),
            Reply(content=ALL_SUPPORTED),
        ),
    )
    j = _judge(fake, tmp_path, samples=3)
    assert kinds(fake) == ["rubric"] * 3 + ["faithfulness"] * 3
    assert [b["messages"] for b in fake.bodies[:3]] == [fake.bodies[0]["messages"]] * 3
    assert j.scores == {"grounding": 4, "relevance": 4, "calibration": 4, "citations": 4, "tone": 2}
    assert j.spread == {"grounding": 2.0, "relevance": 0.0, "calibration": 0.0, "citations": 0.0, "tone": 3.0}
    assert j.as_dict()["spread"]["tone"] == 3.0
    assert j.faithfulness == 1.0 and all(c.supported for c in j.claims)
    assert j.calls == 6


def test_an_even_number_of_samples_can_give_a_half_score(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.responder = by_kind(
        rubric=queue(Reply(content=rubric_json({"grounding": 3})), Reply(content=rubric_json({"grounding": 4})))
    )
    j = _judge(fake, tmp_path, samples=2)
    assert j.scores["grounding"] == 3.5 and j.scores["tone"] == 4 and type(j.scores["tone"]) is int


def test_a_failed_sample_is_left_out_of_the_median_and_noted(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.responder = by_kind(
        rubric=queue(
            Reply(content=rubric_json({"grounding": 2})),
            Reply(content="prose"),
            Reply(content="still prose"),
            Reply(content=rubric_json({"grounding": 4})),
        )
    )
    j = _judge(fake, tmp_path, samples=3)
    assert j.scores["grounding"] == 3
    assert j.notes == (
        "rubric: 1 of 3 samples unscored (judge reply invalid after 2 attempts: the reply is not a JSON object "
        "(Expecting value at character 0)); median of the rest",
    )


def test_one_sample_reports_no_spread(fake: FakeOpenAI, tmp_path: Path) -> None:
    assert _judge(fake, tmp_path).spread == {}


def test_a_decline_needs_more_than_half_the_votes() -> None:
    assert majority([True, True, False]) is True
    assert majority([True, False]) is False
    assert majority([None, None]) is None  # not asked


def test_no_scored_sample_leaves_faithfulness_unscored_with_the_first_samples_claims() -> None:
    first = [Claim("c", False, None, "r")]
    assert faithfulness_median([(None, first), (None, [])]) == (None, first)
    assert faithfulness_median([(0.5, []), (None, first), (1.0, [])]) == (0.75, [])
