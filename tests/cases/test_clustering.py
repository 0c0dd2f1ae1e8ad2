"""Near-duplicates among generated questions: normalised as `dedupe` does, or similar by character n-grams."""

from __future__ import annotations

import math

import pytest

from ragjudge.cases.clustering import clusters, cosine, near_duplicates, vectors


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


# Pinned (issue 40): each decision of the measure has a test that fails when it changes.


def test_the_n_gram_sizes_bigrams_and_trigrams_or_unigrams_and_bigrams_for_chinese() -> None:
    assert sorted(vectors(["abcd"])[0]) == ["ab", "abc", "bc", "bcd", "cd"]
    assert sorted(vectors(["退款要多久"])[0]) == ["久", "多", "多久", "款", "款要", "要", "要多", "退", "退款"]
    # Word order counts through the bigrams: with unigrams alone these two would be the same question (1.00).
    a, b = vectors(["退款要多久", "多久要退款"])
    assert cosine(a, b) == pytest.approx(0.6392, abs=1e-4)


def test_grams_are_weighted_by_idf_over_the_questions_at_hand() -> None:
    # "ab" is in both questions: idf ln(3/3)+1 = 1; the others ln(3/2)+1; then unit length. Unweighted: 1/3.
    a, b = vectors(["abc", "abd"])
    rare = math.log(3 / 2) + 1
    norm = math.sqrt(1 + 2 * rare * rare)
    assert a == pytest.approx({"ab": 1 / norm, "bc": rare / norm, "abc": rare / norm})
    assert cosine(a, b) == pytest.approx(0.20199, abs=1e-5)


def test_at_the_threshold_is_in_the_cluster_and_a_near_duplicate() -> None:
    questions = ["How long do refunds take?", "how long does a refund take"]
    at = cosine(*vectors(questions))
    assert at == pytest.approx(0.5968, abs=1e-4)
    assert clusters(questions, at) == [[0, 1]]
    assert clusters(questions, math.nextafter(at, 2)) == [[0], [1]]
    assert near_duplicates(questions[:1], questions[1:], at) == [0]
    assert near_duplicates(questions[:1], questions[1:], math.nextafter(at, 2)) == [-1]


def test_a_question_is_not_a_repeat_of_one_already_dropped() -> None:
    # c1 repeats X and is dropped; c2 is close to c1 (0.79) but not to X (0.59): it is new, not a repeat of c1.
    x = "How long do refunds take?"
    c1, c2 = "How long do refunds take to arrive?", "How long do refunds take to arrive on my card?"
    assert near_duplicates([x], [c1, c2]) == [0, -1]
