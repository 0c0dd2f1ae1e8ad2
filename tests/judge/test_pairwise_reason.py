"""The pairwise reply's reason (pinned, issue 40): one line, whitespace collapsed, at most `REASON_CHARS`."""

from __future__ import annotations

import pytest

from ragjudge.judge.pairwise import REASON_CHARS, parse_pairwise
from ragjudge.judge.replies import ReplyError


def test_the_reason_is_one_line_cut_to_its_bound() -> None:
    assert REASON_CHARS == 300
    long = "word " * 200
    reply = parse_pairwise('{"winner": "B", "reason": "' + long + '"}')
    assert reply.reason == long.strip()[:300] and len(reply.reason) == 300
    at = "x" * 300
    assert parse_pairwise('{"winner": "tie", "reason": "' + at + '"}').reason == at
    assert parse_pairwise('{"winner": "A", "reason": " a\\n\\n b\\t c "}').reason == "a b c"
    with pytest.raises(ReplyError, match="the reason is empty: say in one line what decided it"):
        parse_pairwise('{"winner": "A", "reason": " \\n "}')
