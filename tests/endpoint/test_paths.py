"""Dotted paths into a reply: followed, and what is found where one stops described in words."""

from __future__ import annotations

import pytest

from ragjudge.endpoint.paths import describe, dig


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a.b", 1),
        ("items.0.text", "first"),
        ("items.-1.text", "last"),
        ("items.1", {"text": "last"}),
    ],
)
def test_dig_follows_paths(path, expected):
    data = {"a": {"b": 1}, "items": [{"text": "first"}, {"text": "last"}]}
    assert dig(data, path) == expected


def test_an_object_of_exactly_twelve_keys_is_described_without_and_0_more() -> None:
    twelve = {f"k{i}": i for i in range(12)}
    assert describe(twelve) == "an object with keys " + ", ".join(f"k{i}" for i in range(12))
    assert describe({**twelve, "k12": 12}).endswith("k11 and 1 more")


def test_put_makes_no_room_past_its_largest_index() -> None:
    # Issue 40 item 11: `response.answer: a.400000000` under a declared protocol filled a list with 400 million
    # nulls (3.1 GB) and died with MemoryError.
    from ragjudge.endpoint.paths import MAX_PUT_INDEX, is_missing, put

    out: dict[str, object] = {}
    put(out, "a.400000000", "the answer")
    assert out == {"a": []} and is_missing(dig(out, "a.400000000"))
    put(out, f"b.{MAX_PUT_INDEX}", "x")
    assert len(out["b"]) == MAX_PUT_INDEX + 1 and dig(out, f"b.{MAX_PUT_INDEX}") == "x"  # type: ignore[arg-type]
