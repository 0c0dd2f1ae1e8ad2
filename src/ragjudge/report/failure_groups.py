"""Failing cases grouped by the condition they failed on: 300 rows of one sentence become one line and a count.

A condition is split into what cases share and what is a case's own: `faithfulness 0.50 < 0.80 (1 of 2 claims
unsupported: "...")` is `faithfulness < 0.80` and `0.50 (1 of 2 claims unsupported: "...")`; `missing required
detail: "30 minutes"` is `missing required detail` and `"30 minutes"`. A condition every case of its group says
alike (`endpoint error: HTTP 500 after 3 attempts`, `missing required detail: "warranty card"`) is the group's
text as written, and the case's row only names the group.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragjudge.report.case_block import CaseBlock
from ragjudge.report.headline_block import FailureGroupBlock

_TURN = re.compile(r"^turns? \d+(?: to \d+)?: ")
_RULE_FAILURE = re.compile(
    r"^(?P<metric>[\w.\-]+) (?P<value>[-+]?\d[\d.]*(?:e[-+]?\d+)?) (?P<op><=|>=|<|>|==|!=) (?P<threshold>[^\s:(]+)"
    r"(?P<rest>.*)$",
    re.DOTALL,
)
_QUOTE_START = re.compile(r':? "|: \(')
_NUMBER = re.compile(r"(?<![\w-])\d+(?:\.\d+)?(?![\w-])")
"""A number on its own (`after 3 tries`), not one inside a name (`c00`, `doc-12`)."""


@dataclass(frozen=True)
class Condition:
    """One failed condition, split."""

    shared: str
    """What every case failing on it says alike: the group's text."""
    own: str
    """What is this case's: the measured value, quotes, details in brackets; empty when nothing is."""


def turn_of(text: str) -> tuple[str, str]:
    """(`turn 2`, the rest) of a conversation's condition; ("", text) for a case's."""
    turn = _TURN.match(text)
    return (turn.group(0).rstrip(": "), text[turn.end() :]) if turn else ("", text)


def split_condition(text: str) -> Condition:
    """A condition as the group's text and the case's own part."""
    turn = _TURN.match(text)
    prefix = turn.group(0) if turn else ""
    body = text[len(prefix) :]
    rule = _RULE_FAILURE.match(body)
    if rule is not None:
        shared = f"{rule['metric']} {rule['op']} {rule['threshold']}"
        return Condition(shared, (prefix + rule["value"] + rule["rest"]).strip())
    quote = _QUOTE_START.search(body)
    if quote is not None and quote.start() > 0:
        return Condition(body[: quote.start()].strip(), prefix + body[quote.start() :].lstrip(": ").strip())
    return Condition(body.strip(), prefix.rstrip(": ").strip())


def group_key(shared: str) -> str:
    """Shared texts that differ only in their numbers (`failed after 3 tries`, `failed after 4 tries`) are one
    group; its text is `failed after … tries`, and each case's row keeps its own numbers."""
    return _NUMBER.sub("…", shared)


def failure_groups(cases: Sequence[CaseBlock]) -> list[FailureGroupBlock]:
    """Every failing or errored gating case under each condition it failed on, the group with most of this
    change's failures first (then the largest; ties: the group seen first); a case is listed once per group
    however often it failed on it (a conversation's turns), and those failing on the baseline too are named apart
    (`pre_existing`)."""
    members: dict[str, list[str]] = {}
    texts: dict[str, set[str]] = {}
    whole: dict[str, set[str]] = {}
    old = {c.id for c in cases if c.change == "still_failing"}
    for case in cases:
        if case.status == "pass" or case.review == "pending":
            continue  # a case pending review gates nothing: counted in its own section, not as a cause
        for text in case.failed_conditions:
            shared = split_condition(text).shared
            key = group_key(shared)
            texts.setdefault(key, set()).add(shared)
            whole.setdefault(key, set()).add(turn_of(text)[1])
            ids = members.setdefault(key, [])
            if not ids or ids[-1] != case.id:
                ids.append(case.id)
    order = {key: k for k, key in enumerate(members)}
    # This change's failures rank a cause before those already failing on the baseline (none without one).
    ranked = sorted(members, key=lambda key: (-sum(i not in old for i in members[key]), -len(members[key]), order[key]))
    return [
        FailureGroupBlock(
            condition=_text(texts[key], whole[key], key),
            cases=members[key],
            pre_existing=[i for i in members[key] if i in old],
        )
        for key in ranked
    ]


def _text(shared: set[str], whole: set[str], key: str) -> str:
    """The group's text: the condition as written when every case says it alike, else what they share."""
    if len(whole) == 1:
        return next(iter(whole))
    return next(iter(shared)) if len(shared) == 1 else key
