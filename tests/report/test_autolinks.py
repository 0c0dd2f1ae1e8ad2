"""Every GitHub autolink in untrusted text stays inert in the comment (issue 11), not only `@` and `#123`."""

from __future__ import annotations

import pytest

from ragjudge.report.escape import html_text, inline

ZW = "\u200b"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see GH-123", f"see GH-{ZW}123"),
        ("see gh-7", f"see gh-{ZW}7"),
        ("octo/repo#42", f"octo/repo\\#{ZW}42"),
        ("octo/repo@1a2b3c4", f"octo/repo@{ZW}1a2b3c{ZW}4"),
        (
            "fixed in 0123456789abcdef0123456789abcdef01234567",
            ZW.join(["fixed in 012345", "6789ab", "cdef01", "234567", "89abcd", "ef0123", "4567"]),
        ),
        ("short abc1234", f"short abc123{ZW}4"),
        ("https://github.com/octo/repo/issues/9", f"https{ZW}://github.com/octo/repo/issues/9"),
        ("HTTP://github.com/octo/repo/pull/9", f"HTTP{ZW}://github.com/octo/repo/pull/9"),
        ("www.github.com/octo/repo/pull/9", f"www{ZW}.github.com/octo/repo/pull/9"),
        ("plain 123456 and word deadbee", f"plain 123456 and word deadbe{ZW}e"),
    ],
)
def test_inline_breaks_every_autolink(text: str, expected: str) -> None:
    assert inline(text) == expected


def test_html_text_breaks_them_too() -> None:
    assert html_text("GH-1 o/r#2 cafebabe https://x.io/o/r/issues/1 www.y.io/o/r/pull/2 https://x.io") == (
        f"GH-{ZW}1 o/r#{ZW}2 cafeba{ZW}be https{ZW}://x.io/o/r/issues/1 www{ZW}.y.io/o/r/pull/2 https://x.io"
    )


def test_other_urls_stay_links() -> None:
    assert inline("see http://127.0.0.1:8000/ask") == "see http://127.0.0.1:8000/ask"
    assert inline("https://ghe.example/o/r/commit/abc") == f"https{ZW}://ghe.example/o/r/commit/abc"


def test_words_that_are_not_hex_are_left_alone() -> None:
    assert inline("deadbeefs and coffee") == "deadbeefs and coffee"
    assert inline("v1.2.3 GH- 12") == "v1.2.3 GH- 12"
