"""The one reading of a Retry-After header: seconds or an HTTP date, never negative, nothing else."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragjudge.transport.retry_after import parse_retry_after

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("120", 120.0),
        ("0", 0.0),
        ("0.25", 0.25),
        ("\t3 ", 3.0),
        ("-1", 0.0),
        ("nan", None),  # reads as a float, says nothing: as if absent, so the caller backs off itself
        ("inf", None),
        ("-inf", None),
        ("1e400", None),  # overflows to inf
        ("0x10", None),
        ("in a minute", None),
        ("   ", None),
    ],
)
def test_delta_seconds(header: str, expected: float | None) -> None:
    assert parse_retry_after(header, now=NOW) == expected


def test_an_http_date_is_measured_from_the_clock_given() -> None:
    assert parse_retry_after("Wed, 01 May 2024 12:01:30 GMT", now=NOW) == 90.0
    assert parse_retry_after(format_datetime(datetime.fromtimestamp(NOW + 5, UTC), usegmt=True), now=NOW) == 5.0


def test_a_date_in_the_past_is_no_wait() -> None:
    assert parse_retry_after("Wed, 01 May 2024 11:00:00 GMT", now=NOW) == 0.0


def test_a_date_without_a_zone_is_gmt_not_local_time() -> None:
    # `-0000` is how RFC 5322 writes "zone unknown"; parsed naively it would move with the runner's TZ.
    assert parse_retry_after("Wed, 01 May 2024 12:00:10 -0000", now=NOW) == 10.0


@pytest.mark.parametrize(
    "header",
    ["Sat, 01 Jan 10000 00:00:00 GMT", "Mon, 99 Foo 2024 99:99:99 GMT", ",", "Wed, 01 May", "GMT"],
)
def test_a_date_that_is_not_one_is_none(header: str) -> None:
    assert parse_retry_after(header, now=NOW) is None


@given(st.text(max_size=40))
def test_never_raises_and_never_negative(header: str) -> None:
    waited = parse_retry_after(header, now=NOW)
    assert waited is None or waited >= 0.0
