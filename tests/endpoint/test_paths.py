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
