"""A generated case held to its document: points and quote verbatim (whitespace aside), the document's language."""

from __future__ import annotations

from ragjudge.cases.candidates import ANSWERED, NOT_VERBATIM, WRONG_LANGUAGE, Misfit, is_fragment, misfit

DOC = "Refunds are issued within one business day.\nCard refunds take 3-5 days. 信用卡退款 3 到 5 天。"


def test_a_fragment_may_differ_in_whitespace_only() -> None:
    assert is_fragment("one business  day. Card refunds", DOC)
    assert is_fragment("信用卡退款3到5天", DOC)
    assert not is_fragment("one business day", "One business day")
    assert not is_fragment("Card refunds take 3–5 days.", DOC)  # an en dash is not the document's hyphen
    assert not is_fragment("  ", DOC)


def test_misfits_say_why() -> None:
    ok = ("How fast is a refund?", ["issued within one business day"], "Refunds are issued within one business day.")
    assert misfit(*ok, DOC, "en", True) is None
    assert misfit("How fast?", ["within two days"], ok[2], DOC, "en", True) == Misfit(
        NOT_VERBATIM, "expected point 'within two days' is not copied from the document", True
    )
    assert misfit("How fast?", ok[1], "Refunds are fast.", DOC, "en", True) == Misfit(
        NOT_VERBATIM, "the quote 'Refunds are fast.' is not copied from the document", True
    )
    assert misfit("How fast?", [], ok[2], DOC, "en", True) == Misfit(
        NOT_VERBATIM, "`expected` is empty: list the points of the answer, each copied", True
    )
    assert misfit("退款多快？", ok[1], ok[2], DOC, "en", True) == Misfit(
        WRONG_LANGUAGE, "the question is in Chinese, the document in English", False
    )
    assert misfit("Do refunds work on Mars?", [], ok[2], DOC, "en", False) is None
    assert misfit("Do refunds work on Mars?", ok[1], ok[2], DOC, "en", False).reason == (  # type: ignore[union-attr]
        "out-of-scope question with expected points"
    )


def test_an_out_of_scope_question_with_points_is_retried_once() -> None:
    # Pinned (issue 40): the reason, the words the model is shown, and that it is asked again (not dropped at once).
    assert misfit("Do refunds work on Mars?", ["within one business day"], "Refunds", DOC, "en", False) == Misfit(
        ANSWERED, "an out-of-scope question has no expected points: leave `expected` empty", True
    )
