"""How figures are written in reasons: `plain`, never an exponent."""

from __future__ import annotations

import pytest

from ragjudge.metrics.spec import plain


@pytest.mark.parametrize(
    ("value", "significant", "shown"),
    [
        (0.8, 6, "0.8"),  # as `:g` writes it, when `:g` writes no exponent
        (2 / 3, 4, "0.6667"),
        (0.0, 6, "0"),
        (12345.0, 4, "12345"),  # `:.4g` wrote 1.234e+04
        (2500000.0, 6, "2500000"),  # 2.5e+06
        (1e-05, 6, "0.00001"),  # 1e-05
        (0.0000123456789, 6, "0.0000123457"),
        (-3e-06, 6, "-0.000003"),
        (float("inf"), 6, "inf"),
    ],
)
def test_plain_never_writes_an_exponent(value: float, significant: int, shown: str) -> None:
    assert plain(value, significant) == shown
