"""The one bounded reader of a repository file (issue 40 items 3, 4): links kept inside their folder, FIFOs and
other non-files refused without blocking, a size limit, the limit and the messages the caller's."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from ragjudge.errors import CaseFileError
from ragjudge.repofiles.bounded import Bound, read_bounded

BOUND = Bound(10, "over 10 bytes, the limit for a test file", tip="make it smaller", missing="no such test file")


def test_a_file_within_the_bound_is_read(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"0123456789")
    assert read_bounded(tmp_path / "a.md", BOUND) == b"0123456789"


def test_one_byte_over_is_refused_with_the_callers_message(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"0123456789x")
    with pytest.raises(CaseFileError) as caught:
        read_bounded(tmp_path / "a.md", BOUND)
    assert (caught.value.message, caught.value.tip) == (
        f"{tmp_path / 'a.md'}: over 10 bytes, the limit for a test file",
        "make it smaller",
    )


def test_a_missing_file_says_the_callers_words(tmp_path: Path) -> None:
    with pytest.raises(CaseFileError) as caught:
        read_bounded(tmp_path / "nope.md", Bound(10, "big", tip="t", missing="no such test file", missing_tip="look"))
    assert (caught.value.message, caught.value.tip) == (f"{tmp_path / 'nope.md'}: no such test file", "look")


def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            read_bounded(fifo, BOUND)
        except BaseException as exc:
            outcome.append(exc)

    started = time.monotonic()
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # before the fix the open waited for a writer forever: free it, then fail
        with open(fifo, "wb"):
            pass
        pytest.fail("reading a FIFO blocked")
    assert time.monotonic() - started < 2
    [error] = outcome
    assert isinstance(error, CaseFileError)
    assert error.message == f"{fifo}: refused: a FIFO (named pipe), not a file"


def test_a_folder_a_device_and_a_socket_are_refused(tmp_path: Path) -> None:
    with pytest.raises(CaseFileError, match=r": refused: a folder, not a file$"):
        read_bounded(tmp_path, BOUND)
    with pytest.raises(CaseFileError, match=r"^/dev/zero: refused: a device, not a file$"):
        read_bounded(Path("/dev/zero"), BOUND)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "s.md"))
        with pytest.raises(CaseFileError, match=r"s.md: refused: a socket, not a file$"):
            read_bounded(tmp_path / "s.md", BOUND)


def test_a_link_inside_the_folder_is_read_one_leaving_it_refused(tmp_path: Path) -> None:
    kb, outside = tmp_path / "kb", tmp_path / "outside"
    (kb / "sub").mkdir(parents=True)
    outside.mkdir()
    (kb / "sub" / "real.md").write_bytes(b"inside")
    (outside / "secret.txt").write_bytes(b"secret")
    (kb / "alias.md").symlink_to(kb / "sub" / "real.md")
    (kb / "notes.md").symlink_to(Path("..") / "outside" / "secret.txt")
    (kb / "linked").symlink_to(outside, target_is_directory=True)
    assert read_bounded(kb / "alias.md", BOUND, inside=kb) == b"inside"
    for leaving in (kb / "notes.md", kb / "linked" / "secret.txt", kb / ".." / "outside" / "secret.txt"):
        with pytest.raises(CaseFileError) as caught:
            read_bounded(leaving, BOUND, inside=kb)
        assert caught.value.message == f"{leaving}: refused: it links outside {kb} (to {outside / 'secret.txt'})"
    assert read_bounded(kb / "notes.md", BOUND) == b"secret"  # without a folder to stay in, a link is followed
