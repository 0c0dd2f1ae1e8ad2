"""Refusals the way services say them: the field, an empty answer, the team's patterns, built-in phrases."""

from __future__ import annotations

import pytest

from ragjudge.config.endpoint_config import RefusalConfig, ResponseMapping
from ragjudge.endpoint.refusal import RefusalRules, builtin_refusal, decide, first_sentence, normalise
from ragjudge.endpoint.reply import ReplyShapeError, parse_reply

BUILTIN = RefusalRules()


def rules(patterns: list[str] | None = None, builtin: bool = True) -> RefusalRules:
    return RefusalRules.from_config(RefusalConfig(patterns=patterns or [], builtin=builtin))


@pytest.mark.parametrize(
    "answer",
    [
        "I can't help with that.",
        "I’m sorry, but I don’t have information about the weather in our documentation.",
        "I cannot answer questions about stock prices.",
        "That topic is not covered in the documentation.",
        "No relevant information was found.",
        "I couldn't find any relevant documents for this question.",
        "This question is outside the scope of our support knowledge base.",
        "抱歉，这个问题我无法回答。",
        "抱歉，暂时无法提供该信息。",
        "没有找到相关的资料。",
        "您的问题超出了我的服务范围。",
        "Ｉ ＣＡＮ'Ｔ ＨＥＬＰ ＷＩＴＨ ＴＨＡＴ",  # full-width forms, normalised
    ],
)
def test_builtin_phrases_in_english_and_chinese_are_refusals(answer):
    assert decide(answer, None, BUILTIN) == "builtin"


@pytest.mark.parametrize(
    "answer",
    [
        "Sorry for the delay! Refunds are paid back to the original card within 5 working days.",
        "抱歉让您久等了。退款将在5个工作日内退回原支付卡。",
        "Sorry!",
        "Water damage is not covered by the warranty.",
        "Refunds take 5 working days.",
    ],
)
def test_apologies_and_answers_are_not_refusals(answer):
    assert decide(answer, None, BUILTIN) is None


def test_a_long_answer_is_searched_in_its_first_sentence_only():
    helpful = (
        "Refunds are paid back to the original card within 5 working days of the return arriving at our "
        "warehouse. For gift cards the rules differ, and that part is not covered in the documentation I have."
    )
    assert len(normalise(helpful)) > 160
    assert decide(helpful, None, BUILTIN) is None
    declining = "I don't have information about gift cards. " + "You may ask our support team by email. " * 5
    assert decide(declining, None, BUILTIN) == "builtin"


def test_first_sentence_ends_at_western_and_chinese_stops():
    assert first_sentence("one. two.") == "one."
    assert first_sentence("一。二。") == "一。"
    assert first_sentence("no stop at all") == "no stop at all"
    assert first_sentence("v1.2 is out! yes") == "v1.2 is out!"


def test_the_order_is_field_then_empty_then_patterns_then_builtin():
    assert decide("I can't help with that.", True, rules(["help"])) == "field"
    assert decide("   ", False, BUILTIN) == "empty"
    assert decide("I can't help with that.", None, rules([r"can't help"])) == "pattern"
    assert decide("I can't help with that.", False, BUILTIN) == "builtin"


def test_patterns_are_case_insensitive_on_the_normalised_answer():
    team = rules([r"^unfortunately\b", "请联系人工客服"])
    assert decide("UNFORTUNATELY   that is not something we do.", None, team) == "pattern"
    assert decide("这个问题请联系人工客服。", None, team) == "pattern"
    assert decide("It is fortunately free.", None, team) is None


def test_builtin_false_turns_the_phrases_off():
    assert decide("I can't help with that.", None, rules(builtin=False)) is None
    assert builtin_refusal("I can't help with that.") is True


# --- the refused field -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "refused", "by"),
    [
        (True, True, "field"),
        (False, False, None),
        ("true", True, "field"),
        ("False", False, None),
        (" YES ", True, "field"),
        ("no", False, None),
        (None, False, None),
    ],
)
def test_refused_field_booleans_and_words(value, refused, by):
    trace = parse_reply({"answer": "Refunds take 5 days.", "refused": value}, ResponseMapping(), 1.0)
    assert (trace.refused, trace.refused_by) == (refused, by)


@pytest.mark.parametrize(
    ("value", "shown"),
    [("maybe", '"maybe"'), (1, "1"), ({"v": True}, "an object with keys v"), ([True], "a list of 1 item of booleans")],
)
def test_any_other_refused_value_is_a_case_error_naming_field_and_value(value, shown):
    mapping = ResponseMapping(refused="status.declined")
    with pytest.raises(ReplyShapeError) as info:
        parse_reply({"answer": "a", "status": {"declined": value}}, mapping, 1.0)
    assert str(info.value) == (
        f"endpoint.response.refused: status.declined is {shown}, not a boolean "
        '(true/false, or the strings "true", "false", "yes", "no")'
    )


def test_a_refusal_in_words_is_reported_with_how_it_was_decided():
    trace = parse_reply({"answer": "抱歉，暂时无法提供该信息。"}, ResponseMapping(), 1.0, BUILTIN)
    assert (trace.refused, trace.refused_by) == (True, "builtin")
    empty = parse_reply({"answer": ""}, ResponseMapping(), 1.0, BUILTIN)
    assert (empty.refused, empty.refused_by) == (True, "empty")


@pytest.mark.parametrize(("length", "refused"), [(160, "builtin"), (161, None)])
def test_the_160_character_boundary_of_a_short_answer(length: int, refused: str | None) -> None:
    # Up to 160 characters the whole answer is searched; past it, only the first sentence.
    second = " I don't know."
    answer = "Refunds are paid back to the card " + "x" * (length - 34 - len(second) - 1) + "." + second
    assert len(normalise(answer)) == length
    assert decide(answer, None, BUILTIN) == refused
