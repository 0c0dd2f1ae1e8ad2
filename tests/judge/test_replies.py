"""Judge replies are validated before they are believed: every way a reply can be wrong is a ReplyError."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ragjudge.judge.interface import NEGATIVE_DIMENSIONS, RUBRIC_DIMENSIONS
from ragjudge.judge.replies import (
    ReplyError,
    ignored_keys,
    parse_claims,
    parse_combined,
    parse_judged,
    parse_rubric,
    response_format,
    strict_schema,
    strip_fence,
)
from tests.judge.openai_helpers import claim, claims_json, rubric_json

IDS = ("p1", "p2")


# ------------------------------------------------------------------------------------------ rubric
def test_valid_rubric_reply_gives_integer_scores_and_stripped_reasons() -> None:
    text = rubric_json({"grounding": 2, "tone": 5}, {"grounding": "  the fee is in no passage  "})
    scores, reasons = parse_rubric(text, RUBRIC_DIMENSIONS)
    assert scores == {"grounding": 2, "relevance": 4, "calibration": 4, "citations": 4, "tone": 5}
    assert all(type(v) is int for v in scores.values())
    assert reasons["grounding"] == "the fee is in no passage"
    assert set(reasons) == set(RUBRIC_DIMENSIONS)


@pytest.mark.parametrize(
    "wrapped",
    [
        "```json\n{body}\n```",
        "```JSON\n{body}\n```",
        "```\n{body}\n```",
        "  \n```json\n{body}\n```  \n",
        "```json{body}```",
    ],
)
def test_a_fenced_json_reply_is_accepted(wrapped: str) -> None:
    text = wrapped.replace("{body}", rubric_json({"relevance": 3}))
    scores, _ = parse_rubric(text, RUBRIC_DIMENSIONS)
    assert scores["relevance"] == 3


def test_strip_fence_only_strips_a_whole_fence() -> None:
    assert strip_fence('```json\n{"a": 1}\n```') == '{"a": 1}'
    assert strip_fence('  {"a": 1}  ') == '{"a": 1}'
    # Prose around a fence is not a fence: it stays and then fails to decode.
    assert strip_fence('Sure! ```json\n{"a": 1}\n```').startswith("Sure!")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("The answer is well grounded, I would give it a 4.", "the reply is not a JSON object (Expecting value at"),
        ('Sure! ```json\n{"scores": {}}\n```', "the reply is not a JSON object"),
        ("", "the reply was empty"),
        ("```json\n```", "the reply was empty"),
        ('{"scores": {"grounding": 4', "the reply is not a JSON object"),
    ],
)
def test_prose_empty_or_broken_json_is_rejected(text: str, message: str) -> None:
    with pytest.raises(ReplyError) as err:
        parse_rubric(text, RUBRIC_DIMENSIONS)
    assert str(err.value).startswith(message)


def test_a_missing_dimension_is_named() -> None:
    data = json.loads(rubric_json())
    del data["scores"]["citations"]
    del data["reasoning"]["tone"]
    with pytest.raises(ReplyError) as err:
        parse_rubric(json.dumps(data), RUBRIC_DIMENSIONS)
    assert str(err.value) == "scores.citations: Field required; reasoning.tone: Field required"


def test_missing_scores_or_reasoning_block_is_rejected() -> None:
    with pytest.raises(ReplyError, match="reasoning: Field required"):
        parse_rubric(json.dumps({"scores": json.loads(rubric_json())["scores"]}), RUBRIC_DIMENSIONS)
    with pytest.raises(ReplyError, match="scores: Field required"):
        parse_rubric(json.dumps({"reasoning": json.loads(rubric_json())["reasoning"]}), RUBRIC_DIMENSIONS)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (6, "scores.grounding: Input should be less than or equal to 5"),
        (0, "scores.grounding: Input should be greater than or equal to 1"),
        (-1, "scores.grounding: Input should be greater than or equal to 1"),
        (4.5, "scores.grounding: Input should be a valid integer"),
        (4.0, "scores.grounding: Input should be a valid integer"),
        ("4", "scores.grounding: Input should be a valid integer"),
        (True, "scores.grounding: Input should be a valid integer"),
        (None, "scores.grounding: Input should be a valid integer"),
        ("NaN", "scores.grounding: Input should be a valid integer"),
    ],
)
def test_scores_must_be_integers_from_1_to_5(value: Any, message: str) -> None:
    with pytest.raises(ReplyError) as err:
        parse_rubric(rubric_json({"grounding": value}), RUBRIC_DIMENSIONS)
    assert str(err.value) == message


@pytest.mark.parametrize("reason", ["", "   ", "\n\t"])
def test_empty_or_blank_reasons_are_rejected(reason: str) -> None:
    with pytest.raises(ReplyError) as err:
        parse_rubric(rubric_json(reasons={"calibration": reason}), RUBRIC_DIMENSIONS)
    assert str(err.value).startswith("reasoning.calibration: String should have at least 1 character")


def test_a_non_string_reason_is_rejected() -> None:
    with pytest.raises(ReplyError, match=r"reasoning\.tone: Input should be a valid string"):
        parse_rubric(rubric_json(reasons={"tone": 5}), RUBRIC_DIMENSIONS)


def test_a_dimension_that_was_not_asked_is_dropped_not_held_against_the_judge() -> None:
    dims = ("relevance", "calibration", "tone")
    scores, reasons = parse_rubric(rubric_json(), dims)  # the reply also scores grounding and citations
    assert set(scores) == set(dims) and set(reasons) == set(dims)


def test_only_the_asked_dimensions_are_required() -> None:
    scores, _ = parse_rubric(rubric_json(dims=NEGATIVE_DIMENSIONS, default=5), NEGATIVE_DIMENSIONS)
    assert scores == {"grounding": 5, "calibration": 5}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1, 2], "reply: Input should be a valid dictionary or instance of RubricReply"),
        ({"scores": [4, 4], "reasoning": {}}, "scores: Input should be a valid dictionary or instance of Scores"),
    ],
)
def test_wrong_shapes_are_rejected(data: Any, message: str) -> None:
    with pytest.raises(ReplyError) as err:
        parse_rubric(json.dumps(data), RUBRIC_DIMENSIONS)
    assert message in str(err.value)


# ------------------------------------------------------------------------------------------ claims
def test_valid_claims_reply() -> None:
    text = claims_json(
        claim("Refunds take 5 days.", True, "p1", "p1 says 5 working days"),
        claim("Shipping is always free.", False, None, "p2 says only over 99 yuan"),
    )
    verdicts = parse_claims(text, IDS)
    assert [(v.claim, v.supported, v.evidence_id, v.reason) for v in verdicts] == [
        ("Refunds take 5 days.", True, "p1", "p1 says 5 working days"),
        ("Shipping is always free.", False, None, "p2 says only over 99 yuan"),
    ]


def test_claims_reply_may_be_fenced() -> None:
    assert len(parse_claims("```json\n" + claims_json(claim("x")) + "\n```", IDS)) == 1


def test_zero_claims_is_a_valid_reply() -> None:
    assert parse_claims('{"claims": []}', IDS) == []


@pytest.mark.parametrize("evidence", [None, "", "null", "none"])
def test_a_supported_claim_without_evidence_id_is_invalid(evidence: str | None) -> None:
    with pytest.raises(ReplyError) as err:
        parse_claims(claims_json(claim("ok", False, None), claim("Refunds take 5 days.", True, evidence)), IDS)
    assert str(err.value) == "claims.1: a supported claim must name its passage in evidence_id"


def test_a_supported_claim_citing_a_passage_that_was_not_shown_is_invalid() -> None:
    with pytest.raises(ReplyError) as err:
        parse_claims(claims_json(claim("Refunds take 5 days.", True, "p9")), IDS)
    assert str(err.value) == "claims.0.evidence_id: 'p9' is not one of the passages shown (p1, p2)"


def test_with_no_passages_no_claim_can_be_supported() -> None:
    with pytest.raises(ReplyError, match=r"not one of the passages shown \(none\)"):
        parse_claims(claims_json(claim("x", True, "p1")), ())


@pytest.mark.parametrize("word", ["unclear", "Unclear", "partial", "unknown", "no", "false", "unsupported"])
def test_unclear_and_similar_verdicts_count_as_unsupported(word: str) -> None:
    [verdict] = parse_claims(claims_json(claim("Refunds take 5 days.", word, None)), IDS)
    assert verdict.supported is False


@pytest.mark.parametrize("word", ["yes", "true", "Supported"])
def test_word_verdicts_for_yes_count_as_supported_and_still_need_evidence(word: str) -> None:
    [verdict] = parse_claims(claims_json(claim("Refunds take 5 days.", word, "p1")), IDS)
    assert verdict.supported is True
    with pytest.raises(ReplyError, match="must name its passage"):
        parse_claims(claims_json(claim("Refunds take 5 days.", word, None)), IDS)


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (claim("", True, "p1"), "claims.0.claim: String should have at least 1 character"),
        (claim("   ", True, "p1"), "claims.0.claim: Value error, must not be blank"),
        (claim("x", True, "p1", reason=""), "claims.0.reason: String should have at least 1 character"),
        (claim("x", True, "p1", reason="  "), "claims.0.reason: Value error, must not be blank"),
        (claim("x", "maybe", None), "claims.0.supported: Input should be a valid boolean, unable to interpret input"),
        (claim("x", None, None), "claims.0.supported: Input should be a valid boolean"),
        ({"claim": "x", "supported": False, "reason": "r"}, "claims.0.evidence_id: Field required"),
        ({**claim("x"), "score": 1}, "claims.0.score: Extra inputs are not permitted"),
    ],
)
def test_malformed_claims_are_rejected(item: dict[str, Any], message: str) -> None:
    with pytest.raises(ReplyError) as err:
        parse_claims(claims_json(item), IDS)
    assert str(err.value) == message


def test_a_reply_without_the_claims_list_is_rejected() -> None:
    with pytest.raises(ReplyError, match="claims: Field required"):
        parse_claims('{"faithfulness": 1.0}', IDS)
    with pytest.raises(ReplyError, match="the reply is not a JSON object"):
        parse_claims("All claims are supported.", IDS)


# ------------------------------------------------------------------------------- response_format
def test_rubric_response_format_is_strict_json_schema_for_exactly_the_asked_dimensions() -> None:
    rf = response_format("rubric", ("relevance", "calibration", "tone"))
    assert rf["type"] == "json_schema"
    js = rf["json_schema"]
    assert js["name"] == "ragjudge_rubric" and js["strict"] is True
    schema = js["schema"]
    assert schema["required"] == ["scores", "reasoning"] and schema["additionalProperties"] is False
    scores = schema["$defs"]["Scores"]
    assert scores["required"] == ["relevance", "calibration", "tone"]
    assert scores["additionalProperties"] is False
    assert scores["properties"]["tone"] == {"maximum": 5, "minimum": 1, "type": "integer"}
    reasoning = schema["$defs"]["Reasoning"]
    assert reasoning["required"] == ["relevance", "calibration", "tone"]
    assert "title" not in json.dumps(rf)


def test_claims_response_format_requires_every_field_of_every_claim() -> None:
    rf = response_format("claims")
    schema = rf["json_schema"]["schema"]
    assert rf["json_schema"]["name"] == "ragjudge_claims"
    assert schema["required"] == ["claims"]
    verdict = schema["$defs"]["ClaimVerdict"]
    assert verdict["required"] == ["claim", "supported", "evidence_id", "reason"]
    assert verdict["additionalProperties"] is False
    assert {"type": "null"} in verdict["properties"]["evidence_id"]["anyOf"]


# ---------------------------------------------------------------------------------------- combined
def _combined(**parts: Any) -> str:
    data: dict[str, Any] = json.loads(rubric_json())
    data["claims"] = [claim("Refunds take 5 days.", True, "p1"), claim("Shipping is free.", False, None, "p2: no")]
    data.update(parts)
    return json.dumps(data)


def test_a_valid_combined_reply_gives_the_rubric_and_the_claims() -> None:
    scores, reasons, claims = parse_combined(_combined(), RUBRIC_DIMENSIONS, IDS)
    assert scores == dict.fromkeys(RUBRIC_DIMENSIONS, 4) and reasons["tone"] == "tone: fine"
    assert [(c.claim, c.supported, c.evidence_id) for c in claims] == [
        ("Refunds take 5 days.", True, "p1"),
        ("Shipping is free.", False, None),
    ]


def test_a_combined_reply_is_checked_like_both_separate_replies() -> None:
    # Every problem is named at once, from either half, so that the one retry can fix them all.
    bad = json.loads(_combined())
    bad["scores"]["tone"] = 0
    bad["claims"][1]["reason"] = " "
    with pytest.raises(ReplyError) as err:
        parse_combined(json.dumps(bad), RUBRIC_DIMENSIONS, IDS)
    assert str(err.value) == (
        "scores.tone: Input should be greater than or equal to 1; claims.1.reason: Value error, must not be blank"
    )
    with pytest.raises(ReplyError, match=r"^claims\.0\.evidence_id: 'p9' is not one of the passages shown \(p1, p2\)$"):
        parse_combined(_combined(claims=[claim("x", True, "p9")]), RUBRIC_DIMENSIONS, IDS)
    with pytest.raises(ReplyError, match=r"^claims: Field required$"):
        parse_combined(rubric_json(), RUBRIC_DIMENSIONS, IDS)
    # A key nobody asked for is ignored, not a failed reply (real models add them); the log names it.
    assert parse_combined(_combined(verdict="pass"), RUBRIC_DIMENSIONS, IDS)[0]["tone"] == 4


def test_a_combined_reply_drops_unasked_dimensions_and_reads_unclear_as_unsupported() -> None:
    text = _combined(claims=[claim("Shipping is free.", "unclear", "", "p2 is vague")])
    scores, _, claims = parse_combined(text, NEGATIVE_DIMENSIONS, IDS)
    assert scores == {"grounding": 4, "calibration": 4}
    assert (claims[0].supported, claims[0].evidence_id) == (False, None)


def test_combined_response_format_is_strict_with_the_asked_dimensions_and_the_claims() -> None:
    rf = response_format("combined", NEGATIVE_DIMENSIONS)
    assert rf["json_schema"]["name"] == "ragjudge_combined" and rf["json_schema"]["strict"] is True
    schema = rf["json_schema"]["schema"]
    assert schema["required"] == ["scores", "reasoning", "claims"] and schema["additionalProperties"] is False
    assert schema["$defs"]["Scores"]["required"] == ["grounding", "calibration"]
    verdict = schema["$defs"]["ClaimVerdict"]
    assert verdict["required"] == ["claim", "supported", "evidence_id", "reason"]
    assert verdict["additionalProperties"] is False
    assert "title" not in json.dumps(rf)


@pytest.mark.parametrize("said", ["yes", 1, "true", None])
def test_declined_must_be_a_json_boolean(said: Any) -> None:
    reply = json.loads(rubric_json(dims=("relevance",)))
    with pytest.raises(ReplyError):
        parse_rubric(json.dumps({**reply, "declined": said}), ("relevance",), declined=True)
    assert parse_rubric(json.dumps({**reply, "declined": False}), ("relevance",), declined=True)[0] == {"relevance": 4}
    # Not asked, `declined` is an unknown top-level key: ignored.
    assert parse_rubric(json.dumps({**reply, "declined": said}), ("relevance",))[0] == {"relevance": 4}


def test_ignored_keys_are_the_top_level_keys_the_schema_does_not_ask_for() -> None:
    schema = response_format("rubric", ("relevance",))
    reply = json.loads(rubric_json(dims=("relevance",)))
    assert ignored_keys(json.dumps({**reply, "summary": "x", "notes": 1}), schema) == ["notes", "summary"]
    assert ignored_keys(json.dumps(reply), schema) == []
    assert ignored_keys("[1, 2]", schema) == [] and ignored_keys("not json", schema) == []
    assert ignored_keys(json.dumps({**reply, "summary": "x"}), {}) == []


def test_parse_judged_reads_claims_only_from_a_combined_reply_and_loosens_them() -> None:
    rubric = rubric_json(dims=("relevance",))
    parsed = parse_judged(rubric, ("relevance",), None, False, None, "Refunds take 5 days.")
    assert (parsed.scores, parsed.claims, parsed.points, parsed.declined) == ({"relevance": 4}, None, None, None)
    combined = {**json.loads(rubric), "claims": [claim("Refunds take 5 days.", "unclear", "")]}
    judged = parse_judged(json.dumps(combined), ("relevance",), ["p1"], False, None, "Refunds take 5 days.")
    assert judged.claims is not None
    assert [(c.supported, c.evidence_id) for c in judged.claims] == [(False, None)]


def test_strict_schema_closes_only_objects_with_properties() -> None:
    assert strict_schema({"type": "object", "title": "T"}) == {"type": "object"}
    assert strict_schema({"properties": {"a": {"default": 1}}}) == {"properties": {"a": {}}}
    assert strict_schema({"type": "object", "properties": {"a": {}}}) == {
        "type": "object",
        "properties": {"a": {}},
        "required": ["a"],
        "additionalProperties": False,
    }


# --------------------------------------------------------------- criteria named like pydantic's own
# A criterion's name is any identifier that starts with a letter; the reply model's fields are the judge's
# keys by alias, so a name pydantic itself uses (`model_config`, `model_dump`, `json`) is judged like any other.
PYDANTIC_NAMES = ("model_config", "model_dump", "model_fields", "json", "schema", "copy", "validate")


@pytest.mark.parametrize("name", PYDANTIC_NAMES)
def test_a_criterion_named_like_a_pydantic_member_is_judged(name: str, recwarn: pytest.WarningsRecorder) -> None:
    asked = ("grounding", name)
    reply = {"scores": {"grounding": 4, name: 2}, "reasoning": {"grounding": "fine", name: "  terse  "}}
    parsed = parse_judged(json.dumps(reply), asked, None, False, None, "an answer")
    assert (parsed.scores, parsed.reasoning) == ({"grounding": 4, name: 2}, {"grounding": "fine", name: "terse"})
    defs = response_format("rubric", asked)["json_schema"]["schema"]["$defs"]
    assert [(d["required"], list(d["properties"])) for d in (defs["Scores"], defs["Reasoning"])] == [
        (list(asked), list(asked))
    ] * 2
    reply["scores"][name] = 9
    with pytest.raises(ReplyError, match=rf"^scores\.{name}: Input should be less than or equal to 5$"):
        parse_judged(json.dumps(reply), asked, None, False, None, "an answer")
    assert [str(w.message) for w in recwarn] == []


# ------------------------------------------------------------------------------------------ duplicate keys
@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('{"winner": "A", "reason": "shorter", "winner": "B"}', "winner"),
        ('{"winner": "tie", "reason": "x", "nested": {"a": 1, "a": 2}}', "a"),
    ],
)
def test_a_reply_giving_a_key_twice_is_refused(text: str, key: str) -> None:
    # Issue 40 item 16: a pairwise reply `{"winner":"A","winner":"B"}` was read by its last value.
    from ragjudge.judge.pairwise import parse_pairwise

    with pytest.raises(ReplyError) as caught:
        parse_pairwise(text)
    assert str(caught.value) == f"the reply gives the key {key!r} twice in one object; give each key once"
    rubric = rubric_json({"grounding": 2, "tone": 5}, {})
    with pytest.raises(ReplyError, match="the reply gives the key 'scores' twice in one object"):
        parse_rubric(rubric[:-1] + ', "scores": {}}', RUBRIC_DIMENSIONS)
