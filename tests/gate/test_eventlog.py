"""The `--log` writer: JSONL, type + case id + timestamp on every line, flushed, secrets masked."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ragjudge.errors import ExitCode, UsageError
from ragjudge.gate.eventlog import EventLog


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_each_line_has_type_case_id_timestamp_and_fields(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)
    before = datetime.now(UTC)
    log.write("endpoint", "cs-001", {"attempt": 1, "ok": True, "status": 200})
    log.write("judge", "cs-001", {"faithfulness": 0.5, "问题": "退款"})
    log.close()
    first, second = _lines(path)
    assert list(first)[:3] == ["type", "case_id", "timestamp"]
    assert {k: v for k, v in first.items() if k != "timestamp"} == {
        "type": "endpoint",
        "case_id": "cs-001",
        "attempt": 1,
        "ok": True,
        "status": 200,
    }
    assert {k: v for k, v in second.items() if k != "timestamp"} == {
        "type": "judge",
        "case_id": "cs-001",
        "faithfulness": 0.5,
        "问题": "退款",
    }
    stamp = datetime.fromisoformat(str(first["timestamp"]))
    assert stamp.tzinfo is not None
    assert before - timedelta(seconds=1) <= stamp <= datetime.now(UTC) + timedelta(seconds=1)
    assert "退款" in path.read_text(encoding="utf-8")  # not \u-escaped


def test_lines_are_flushed_as_they_go(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)
    log.write("endpoint", "a", {"n": 1})
    assert len(_lines(path)) == 1  # readable before close
    log.write("judge", "a", {"n": 2})
    assert len(_lines(path)) == 2
    log.close()


def test_secrets_are_masked(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path, ("Bearer tok-123456", "tok-123456"))
    log.write("endpoint", "a", {"error": "server said: Bearer tok-123456 is bad", "echo": "tok-123456"})
    log.close()
    text = path.read_text(encoding="utf-8")
    assert "tok-123456" not in text
    assert _lines(path)[0]["error"] == "server said: *** is bad"
    assert _lines(path)[0]["echo"] == "***"


def test_values_json_cannot_encode_are_written_as_text(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)
    log.write("endpoint", "a", {"path": Path("x/y")})
    log.close()
    assert _lines(path)[0]["path"] == "x/y"


def test_no_path_is_a_no_op(tmp_path: Path) -> None:
    log = EventLog(None)
    log.write("endpoint", "a", {"n": 1})
    log.close()
    assert list(tmp_path.iterdir()) == []


def test_parent_folders_are_created(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "log.jsonl"
    log = EventLog(path)
    log.write("judge", "a", {})
    log.close()
    assert len(_lines(path)) == 1


def test_an_unwritable_path_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(UsageError) as info:
        EventLog(blocker / "log.jsonl")
    assert info.value.message.startswith(f"{blocker / 'log.jsonl'}: cannot write the log (")
    assert info.value.exit_code == ExitCode.BAD_INPUT


def test_writes_after_close_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)
    log.write("judge", "a", {})
    log.close()
    log.write("judge", "b", {})
    log.close()
    assert [line["case_id"] for line in _lines(path)] == ["a"]


def test_concurrent_writers_never_interleave_lines(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = EventLog(path)

    def writer(n: int) -> None:
        for i in range(200):
            log.write("endpoint", f"case-{n}", {"i": i, "pad": "x" * 500})

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close()
    lines = _lines(path)
    assert len(lines) == 1600
    for n in range(8):
        assert [line["i"] for line in lines if line["case_id"] == f"case-{n}"] == list(range(200))
