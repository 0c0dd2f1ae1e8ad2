"""The run's bill in one phrase (`report/bill.py`), as the comment's footer, the HTML header, the console and the
canary's footer give it: unknown never reads as $0.00, and neither does a small cost that was spent."""

from __future__ import annotations

import pytest

from ragjudge.report.bill import bill_words


@pytest.mark.parametrize(
    ("figures", "phrase"),
    [
        ((12, 0.41, 1.2, None), "judge $0.41 · service $1.20"),
        ((12, 0.0028, 0.001382, None), "judge $0.0028 · service $0.0014"),
        ((12, None, None, None), "judge cost unknown"),
        ((12, 0.0, None, None), "judge $0.00"),  # calls all read from the cache: nothing was spent
        ((0, None, None, 0.0012), "service $0.0012 (its traces' tokens)"),
        ((0, 0.0, 0.5, 0.0012), "service $0.50"),  # what the replies reported wins over the traces' estimate
        ((0, None, None, None), ""),
        ((3, True, "1.2", None), "judge cost unknown"),  # read back from a report: not a number is unknown
    ],
)
def test_the_bill_in_words(figures: tuple[object, object, object, object], phrase: str) -> None:
    assert bill_words(*figures) == phrase
