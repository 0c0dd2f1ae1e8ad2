"""Near-duplicates among generated questions: normalised as `dedupe` does, or similar by character n-grams."""

from __future__ import annotations

from ragjudge.cases.clustering import near_duplicates


def test_a_repeat_names_the_earlier_question_it_repeats() -> None:
    earlier = ["How long do refunds take?"]
    asked = [
        "HOW LONG DO REFUNDS TAKE",  # the same after normalisation
        "How long do credit card refunds take?",
        "How long do the credit card refunds take",  # repeats the one kept just before
        "退款要多久？",
        "退款需要多久",
        "Where do refunds go back to?",
    ]
    assert near_duplicates(earlier, asked) == [0, -1, 2, -1, 4, -1]


def test_a_dropped_question_is_not_an_earlier_one() -> None:
    assert near_duplicates(["a b c d e f"], ["a b c d e f", "a b c d e f!"]) == [0, 0]
