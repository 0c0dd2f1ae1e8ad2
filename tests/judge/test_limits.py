"""What the judge is sent is bounded (issue 11): passages, the quote of an invalid reply, and no secrets."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ragjudge import masking
from ragjudge.judge.interface import AnswerCut
from tests.fakes.openai_server import FakeOpenAI, Reply, queue
from tests.fakes.rag import make_case, make_trace
from tests.judge.openai_helpers import GOOD_CLAIMS, by_kind, claims_json, kind_of, make_judge, user_text

CASE = make_case("c1", "How long do refunds take?")


def test_the_judge_sees_at_most_max_passages_each_cut_to_max_passage_chars(fake: FakeOpenAI, tmp_path: Path) -> None:
    # Reproduces the probe: 100,000 passages made a 7.5 MB prompt.
    passages = {f"p{i}": f"passage {i} " + "x" * 5000 for i in range(100_000)}
    trace = make_trace("Refunds take 5 days.", ids=list(passages), passages=passages)
    fake.responder = by_kind(faithfulness=Reply(content=claims_json()))

    judgement = make_judge(fake, None).judge(CASE, trace, lambda fields: None)

    for body in fake.bodies:
        text = user_text(body)
        assert "[p19]" in text and "[p20]" not in text
        assert len(text) < 20 * 4100 + 5000
        assert "passage 0 " + "x" * (4000 - len("passage 0 ")) + "\n" in text
    assert judgement.notes[:2] == (
        "the judge saw the first 20 of 100000 passages (judge.max_passages)",
        "20 passage(s) cut to 4000 characters for the judge (judge.max_passage_chars)",
    )


def test_the_limits_are_settings_and_nothing_is_noted_when_nothing_was_cut(fake: FakeOpenAI, tmp_path: Path) -> None:
    passages = {"a": "short one", "b": "short two", "c": "short three"}
    trace = make_trace("Refunds take 5 days.", ids=list(passages), passages=passages)
    judgement = make_judge(fake, None, max_passages=2, max_passage_chars=50).judge(CASE, trace, lambda f: None)
    assert "[b]" in user_text(fake.bodies[0]) and "[c]" not in user_text(fake.bodies[0])
    assert judgement.notes == ("the judge saw the first 2 of 3 passages (judge.max_passages)",)
    fake.reset()
    judgement = make_judge(fake, None).judge(CASE, trace, lambda f: None)
    assert judgement.notes == ()


def test_the_corrective_retry_quotes_at_most_2000_characters_of_the_invalid_reply(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    # Reproduces the probe: a 20 MB field quoted back whole made a 120 MB log.
    huge = json.dumps({"claims": [{"claim": "y" * 3_000_000, "supported": "maybe"}]})
    fake.responder = by_kind(faithfulness=queue(Reply(content=huge), GOOD_CLAIMS))
    trace = make_trace("Refunds take 5 days.", ids=["p1"], passages={"p1": "Refunds take 5 days."})

    make_judge(fake, None).judge(CASE, trace, lambda f: None, rubric=False)

    second = [b for b in fake.bodies if kind_of(b) == "faithfulness"][1]
    assistant, correction = second["messages"][2], second["messages"][3]
    assert assistant["role"] == "assistant"
    assert len(assistant["content"]) < 2100
    assert assistant["content"].endswith(f"… [{len(huge) - 2000} more characters not shown]")
    assert len(correction["content"]) < 4000


def test_secrets_in_an_answer_or_passage_are_masked_before_the_judge_sees_them(fake: FakeOpenAI) -> None:
    masking.register("tok-5ecret-99")
    trace = make_trace("Use tok-5ecret-99 to log in.", ids=["p1"], passages={"p1": "the token is tok-5ecret-99"})
    make_judge(fake, None).judge(CASE, trace, lambda f: None)
    sent = json.dumps(fake.bodies)
    assert "tok-5ecret-99" not in sent and "Use *** to log in." in sent and "the token is ***" in sent


def test_a_secret_at_the_passage_bound_is_masked_before_the_cut(fake: FakeOpenAI) -> None:
    # Issue 40 item 13: the passage was cut first, so `tok-5ecret-99` cut to `tok-5ecr` was no longer recognised
    # and its first half reached the judge.
    masking.register("tok-5ecret-99")
    text = "x" * 42 + "tok-5ecret-99 and more after it"
    trace = make_trace("Fine.", ids=["p1"], passages={"p1": text})
    make_judge(fake, None, max_passage_chars=50).judge(CASE, trace, lambda f: None)
    sent = json.dumps(fake.bodies)
    assert "tok-5ec" not in sent and "x" * 42 + "***" in sent


# Issue 27, item 4: a 4.5 MB answer made one judge request of 4,507,002 bytes.
HUGE_ANSWER = "Refunds take 5 days. " + "x" * 4_500_000 + " TAIL"
CUT_NOTE = (
    "(ragjudge cut this answer at 8000 of its 4500026 characters (judge.max_answer_chars): only the part above is "
    "shown. Judge that part, and do not count the cut against the assistant.)"
)


@pytest.mark.parametrize("combined", [True, False])
def test_a_huge_answer_is_cut_to_max_answer_chars_the_prompt_says_where_and_the_judgement_records_it(
    fake: FakeOpenAI, combined: bool
) -> None:
    trace = make_trace(HUGE_ANSWER, ids=["p1"], passages={"p1": "Refunds take 5 days."})
    judgement = make_judge(fake, None, combined=combined).judge(CASE, trace, lambda fields: None)

    assert len(fake.requests) == (1 if combined else 2)  # the combined call, or the rubric and the claims
    for request in fake.requests:
        assert int(request["headers"]["content-length"]) < 16_000  # 8,000 characters of answer, and the prompt
        text = user_text(request["body"])
        assert f"<answer>\nRefunds take 5 days. {'x' * (8000 - 21)}\n</answer>\n{CUT_NOTE}\n" in text
        assert "TAIL" not in text
    assert judgement.answer_cut == AnswerCut(shown_chars=8000, answer_chars=4_500_026)
    assert judgement.as_dict()["answer_cut"] == {"shown_chars": 8000, "answer_chars": 4_500_026}
    assert (
        judgement.notes[0] == "the judge saw the first 8000 of the answer's 4500026 characters (judge.max_answer_chars)"
    )
    assert judgement.scores and not judgement.unscored  # judged on what it was shown


def test_an_answer_within_max_answer_chars_is_sent_whole_and_nothing_is_recorded(fake: FakeOpenAI) -> None:
    answer = "Refunds take 5 days. " + "y" * 79  # 100 characters: exactly the bound
    trace = make_trace(answer, ids=["p1"], passages={"p1": "Refunds take 5 days."})
    judgement = make_judge(fake, None, max_answer_chars=100).judge(CASE, trace, lambda fields: None)
    assert f"<answer>\n{answer}\n</answer>\n\n" in user_text(fake.bodies[0])
    assert "ragjudge cut" not in json.dumps(fake.bodies)
    assert judgement.answer_cut is None and "answer_cut" not in judgement.as_dict() and judgement.notes == ()
    fake.reset()
    judgement = make_judge(fake, None, max_answer_chars=100).judge(CASE, replace(trace, answer=answer + "z"), print)
    assert judgement.answer_cut == AnswerCut(100, 101)
    assert "(ragjudge cut this answer at 100 of its 101 characters" in user_text(fake.bodies[0])


def test_a_secret_the_cut_falls_inside_is_masked_whole_not_half_sent(fake: FakeOpenAI) -> None:
    masking.register("tok-5ecret-99")
    answer = "a" * 95 + "tok-5ecret-99 and more"  # the bound, 100, falls inside the secret
    trace = make_trace(answer, ids=["p1"], passages={"p1": "Refunds take 5 days."})
    make_judge(fake, None, max_answer_chars=100).judge(CASE, trace, lambda fields: None)
    sent = json.dumps(fake.bodies)
    assert "tok-5" not in sent and "a" * 95 + "***" in sent


def test_the_pairwise_judge_masks_a_secret_before_it_cuts_an_answer_or_a_passage(fake: FakeOpenAI) -> None:
    # The pairwise judge bounds both sides as the rubric judge does: masked first, then cut (issue 40 item 13).
    from ragjudge.judge.pairwise import PairwiseJudge, Side
    from tests.judge.openai_helpers import judge_config

    masking.register("tok-pair-secret-42")
    fake.responder = lambda body, i: Reply(content=json.dumps({"winner": "tie", "reason": "the same"}))
    config = judge_config(fake.base_url, None, max_answer_chars=110, max_passage_chars=60)
    answer = "y" * 100 + "tok-pair-secret-42 and the rest"
    passage = "z" * 50 + "tok-pair-secret-42 and the rest"
    PairwiseJudge(config).compare("Q?", [], Side("Main's answer."), Side(answer, (passage,)), lambda f: None)
    sent = json.dumps(fake.bodies)
    assert "tok-pa" not in sent and "y" * 100 + "***" in sent and "z" * 50 + "***" in sent
