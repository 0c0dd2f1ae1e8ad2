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
