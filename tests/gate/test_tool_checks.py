"""A case's tool conditions, checked deterministically: each failure a condition in words, `order` as LangChain
agentevals reads it, and a reply that exposes no tool calls leaves them unknown."""

from __future__ import annotations

from typing import Any

import pytest

from ragjudge.cases.tools import ToolConditions, ToolsModel
from ragjudge.endpoint.trace import ToolCall
from ragjudge.gate.tool_checks import tool_failures


def _calls(*calls: tuple[str, Any]) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(name, args, i) for i, (name, args) in enumerate(calls, 1))


def _conditions(**written: Any) -> ToolConditions:
    conditions = ToolConditions.of(ToolsModel.model_validate(written))
    assert conditions is not None
    return conditions


LOOKUP = ("lookup_order", {"order_id": "A123"})
SEARCH = ("search_docs", {"query": "refunds"})
REFUND = ("issue_refund", {"order_id": "A123"})


@pytest.mark.parametrize(
    ("written", "calls", "failures"),
    [
        ({"called": ["lookup_order"]}, [LOOKUP], []),
        ({"called": ["lookup_order"]}, [], ["did not call lookup_order"]),
        ({"not_called": ["issue_refund"]}, [LOOKUP, REFUND], ["called issue_refund, which this case forbids"]),
        ({"args": {"lookup_order": {"order_id": "A123"}}}, [LOOKUP], []),
        (
            {"args": {"lookup_order": {"order_id": "A123"}}},
            [("lookup_order", {"order_id": "A124"})],
            ['lookup_order called with order_id "A124", expected "A123"'],
        ),
        (
            {"args": {"lookup_order": {"order_id": "A123"}}},
            [("lookup_order", {})],
            ['lookup_order called without order_id, expected "A123"'],
        ),
        # One call with the right arguments among several is enough.
        ({"args": {"lookup_order": {"order_id": "A123"}}}, [("lookup_order", {"order_id": "B9"}), LOOKUP], []),
        ({"args": {"lookup_order": {"order_id": "A123"}}}, [SEARCH], ["did not call lookup_order"]),
        # unordered (the default): exactly these tools, any order.
        ({"called": ["lookup_order", "search_docs"]}, [SEARCH, LOOKUP], []),
        (
            {"called": ["lookup_order"]},
            [SEARCH, LOOKUP],
            ["called search_docs, which `called` does not list (order: unordered)"],
        ),
        # superset: at least these.
        ({"called": ["lookup_order"], "order": "superset"}, [SEARCH, LOOKUP], []),
        ({"called": ["lookup_order"], "order": "superset"}, [SEARCH], ["did not call lookup_order"]),
        # subset: none but these (some may be skipped).
        ({"called": ["lookup_order", "search_docs"], "order": "subset"}, [LOOKUP], []),
        (
            {"called": ["lookup_order"], "order": "subset"},
            [LOOKUP, SEARCH],
            ["called search_docs, which `called` does not list (order: subset)"],
        ),
        # strict: exactly these, in this order.
        ({"called": ["search_docs", "lookup_order"], "order": "strict"}, [SEARCH, LOOKUP], []),
        (
            {"called": ["search_docs", "lookup_order"], "order": "strict"},
            [LOOKUP, SEARCH],
            ["called lookup_order, search_docs in that order, expected search_docs, lookup_order (order: strict)"],
        ),
    ],
)
def test_each_failure_is_a_condition_in_words(
    written: dict[str, Any], calls: list[tuple[str, Any]], failures: list[str]
) -> None:
    assert tool_failures(_conditions(**written), _calls(*calls)) == failures


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ({"called": ["a"], "not_called": ["a"]}, "a: both called and not_called"),
        ({}, "give at least one of called, not_called, args"),
        ({"called": ["a"], "order": "sorted"}, "Input should be 'strict', 'unordered', 'subset' or 'superset'"),
        ({"called": ["a"], "calls": ["b"]}, "Extra inputs are not permitted"),
    ],
)
def test_a_bad_tools_block_is_refused(written: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ToolsModel.model_validate(written)
