"""`--shard i/n`: parsing, and a partition that is stable, complete and disjoint."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ragjudge.cli import main
from ragjudge.errors import UsageError
from ragjudge.gate.shard import Shard, parse_shard, shard_of

IDS = [f"cs-{k:03d}" for k in range(1, 301)]


def test_parse() -> None:
    assert parse_shard("2/3") == Shard(2, 3)
    assert parse_shard(" 1 / 1 ") == Shard(1, 1)
    assert str(Shard(2, 3)) == "2/3"


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", "-1/3", "1/3/5", ""])
def test_bad_shard_is_a_usage_error_saying_what_to_write(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_shard(text)
    assert caught.value.message == f"--shard {text!r}: expected i/n with 1 <= i <= n <= 999999"
    assert caught.value.tip is not None and "--shard 2/3" in caught.value.tip


def test_a_shard_count_of_5000_digits_is_a_usage_error_not_a_value_error() -> None:
    # int() refuses 4,300 digits and more with ValueError: it was exit 3 (internal error).
    text = "1/" + "7" * 5000
    with pytest.raises(UsageError) as caught:
        parse_shard(text)
    assert caught.value.message == f"--shard {text[:40] + '…'!r}: expected i/n with 1 <= i <= n <= 999999"
    assert parse_shard("999999/999999") == Shard(999999, 999999)


def test_a_huge_shard_is_exit_2_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    config = Path(__file__).resolve().parents[2] / "examples" / "ragjudge.yml"
    assert main(["run", "--config", str(config), "--shard", "1/" + "9" * 5000]) == 2
    assert "expected i/n with 1 <= i <= n <= 999999" in capsys.readouterr().err


def test_the_partition_is_complete_and_disjoint() -> None:
    shards = [Shard(i, 3) for i in (1, 2, 3)]
    owners = {case_id: [s.index for s in shards if s.keeps(case_id)] for case_id in IDS}
    assert all(len(found) == 1 for found in owners.values())
    sizes = [sum(1 for found in owners.values() if found == [i]) for i in (1, 2, 3)]
    assert sum(sizes) == len(IDS)
    assert min(sizes) >= 80  # a hash spreads 300 ids evenly enough (expected 100 each)


def test_the_shard_depends_on_the_id_alone() -> None:
    # SHA-256 of the id, not Python's per-process salted hash(): the same in every run and on every runner.
    expected = int.from_bytes(hashlib.sha256(b"cs-001").digest()[:8], "big") % 3 + 1
    assert shard_of("cs-001", 3) == expected
    assert [shard_of(i, 3) for i in IDS[:6]] == [1, 1, 3, 3, 3, 3]  # pinned: a change would reshuffle every matrix


def test_positions_are_the_places_in_the_whole_set() -> None:
    shard = Shard(2, 3)
    positions = shard.positions(IDS)
    assert positions == [k for k, i in enumerate(IDS) if shard_of(i, 3) == 2]
    assert Shard(1, 1).positions(IDS[:4]) == [0, 1, 2, 3]
