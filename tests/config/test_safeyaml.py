"""YAML with limits: aliases may be used, bombs, cycles and deep nesting may not."""

from __future__ import annotations

import pytest
import yaml

from ragjudge.config import safeyaml


def test_ordinary_aliases_and_merge_keys_load() -> None:
    text = "base: &b {timeout_s: 5}\nendpoint:\n  <<: *b\n  retries: 1\nlist: [*b, *b]\n"
    assert safeyaml.load(text).data == {
        "base": {"timeout_s": 5},
        "endpoint": {"timeout_s": 5, "retries": 1},
        "list": [{"timeout_s": 5}, {"timeout_s": 5}],
    }


def test_an_empty_document_is_none() -> None:
    loaded = safeyaml.load("")
    assert (loaded.data, loaded.node) == (None, None)


def test_nesting_at_the_limit_loads_and_one_more_level_does_not() -> None:
    at_limit = "[" * safeyaml.MAX_DEPTH + "]" * safeyaml.MAX_DEPTH
    assert safeyaml.load(at_limit).data is not None
    with pytest.raises(safeyaml.YamlLimitError, match="nested deeper than 100 levels"):
        safeyaml.load("[" + at_limit + "]")


def test_expansion_just_under_the_limit_loads() -> None:
    # 1,000 aliases to a 99-item list add 99,000 values (plus the alias nodes themselves).
    text = "a: &a [" + ", ".join(["x"] * 98) + "]\nb: [" + ", ".join(["*a"] * 1000) + "]\n"
    assert len(safeyaml.load(text).data["b"]) == 1000
    bigger = "a: &a [" + ", ".join(["x"] * 120) + "]\nb: [" + ", ".join(["*a"] * 1000) + "]\n"
    with pytest.raises(safeyaml.YamlLimitError, match="aliases expand to over 100,000 extra values"):
        safeyaml.load(bigger)


@pytest.mark.parametrize("text", ["a: &a [*a]", "a: &a {k: *a}", "a: &a [1, [2, *a]]"])
def test_recursive_aliases_are_refused(text: str) -> None:
    with pytest.raises(safeyaml.YamlLimitError, match="recursive alias"):
        safeyaml.load(text)


def test_syntax_errors_are_yaml_errors() -> None:
    with pytest.raises(yaml.YAMLError):
        safeyaml.load("a: [unterminated")


def test_python_tags_are_refused_as_by_safe_load() -> None:
    with pytest.raises(yaml.YAMLError):
        safeyaml.load("!!python/object/apply:os.system ['true']")


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ("gate:\n  pass_rate: '>= 0.9'\nendpoint: {}\ngate:\n  pass_rate: '>= 0.1'\n", 4, "gate"),
        ("- id: a\n  question: q?\n  id: b\n", 3, "id"),
        ("{a: 1, b: 2, a: 3}\n", 1, "a"),
    ],
)
def test_a_key_given_twice_is_refused(text: str, line: int, key: str) -> None:
    # Issue 40 item 14: the last of two equal keys was kept in silence (`gate:` twice dropped the first rules).
    with pytest.raises(safeyaml.YamlLimitError) as caught:
        safeyaml.load(text)
    assert caught.value.line == line
    assert caught.value.message.startswith(f"key {key!r} is given twice in one mapping (first at line ")
    assert caught.value.tip == "give each key once: merge the two blocks into one"


def test_a_merge_then_an_override_and_equal_keys_in_two_mappings_are_not_repeats() -> None:
    text = "base: &b {retries: 1}\nendpoint:\n  <<: *b\n  retries: 2\nother: {retries: 3}\n'1': x\n1: y\n"
    assert safeyaml.load(text).data["endpoint"] == {"retries": 2}
