"""A text's language by its script: Han characters against Latin words."""

from __future__ import annotations

import pytest

from ragjudge.cases.language import language_of


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("退货需要多久？", "zh"),
        ("iPhone 15 退货要多久", "zh"),  # two Latin words, five Han characters
        ("How long do refunds take?", "en"),
        ("What does 包邮 mean?", "en"),  # three Latin words, two Han characters
        ("Café crème?", "en"),
        ("2026-12-03 ?", None),
        ("", None),
    ],
)
def test_language_of(text: str, language: str | None) -> None:
    assert language_of(text) == language
