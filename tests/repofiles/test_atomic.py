"""The one writer into the repository (issue 40): a fresh temporary file, never a link, the mode kept, and nothing
written over a change made since the file was read."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ragjudge.errors import CaseFileError
from ragjudge.repofiles.atomic import ANY, write_atomic


def test_the_file_is_replaced_whole_and_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_bytes(b"old\n")
    path.chmod(0o600)
    write_atomic(path, b"new\n", b"old\n")
    assert path.read_bytes() == b"new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == ["cases.yaml"]


def test_a_new_file_takes_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "sub" / "new.yaml", b"x\n", None)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "sub" / "new.yaml").stat().st_mode) == 0o640


def test_the_temporary_name_is_fresh_each_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every name a temporary file could take is planted as a link outside: none is written through.
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"keep\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    path = repo / "cases.yaml"
    path.write_bytes(b"old\n")
    names = iter(["planted", "fresh"])
    monkeypatch.setattr("ragjudge.repofiles.atomic.secrets.token_hex", lambda n: next(names))
    (repo / ".cases.yaml.planted.tmp").symlink_to(outside)
    with pytest.raises(CaseFileError, match=r"cases.yaml: cannot write beside it: File exists"):
        write_atomic(path, b"new\n", b"old\n")
    assert outside.read_bytes() == b"keep\n" and path.read_bytes() == b"old\n"
    write_atomic(path, b"new\n", b"old\n")
    assert path.read_bytes() == b"new\n" and outside.read_bytes() == b"keep\n"


def test_a_change_since_the_read_is_kept_and_named(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_bytes(b"old\nand a line another program added\n")
    with pytest.raises(CaseFileError) as caught:
        write_atomic(path, b"new\n", b"old\n")
    assert caught.value.message == f"{path}: changed since ragjudge read it; nothing was written"
    assert caught.value.exit_code == 2
    assert path.read_bytes() == b"old\nand a line another program added\n"
    assert os.listdir(tmp_path) == ["cases.yaml"]


def test_a_file_that_appeared_since_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "new.yaml"
    path.write_bytes(b"someone else's\n")
    with pytest.raises(CaseFileError, match="changed since ragjudge read it"):
        write_atomic(path, b"mine\n", None)
    assert path.read_bytes() == b"someone else's\n"


def test_a_shorter_change_is_a_change(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_bytes(b"ol")
    with pytest.raises(CaseFileError, match="changed since"):
        write_atomic(path, b"new\n", b"old\n")


def test_a_link_is_refused_not_followed_nor_replaced(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_bytes(b"old\n")
    link = tmp_path / "cases.yaml"
    link.symlink_to(real)
    with pytest.raises(CaseFileError) as caught:
        write_atomic(link, b"new\n", b"old\n")
    assert caught.value.message == (f"{link}: refused: a symbolic link (to {real}); ragjudge writes only regular files")
    assert link.is_symlink() and real.read_bytes() == b"old\n"


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "out.yaml"
    os.mkfifo(fifo)
    with pytest.raises(CaseFileError) as caught:
        write_atomic(fifo, b"x\n", ANY)
    assert caught.value.message == f"{fifo}: refused: a FIFO (named pipe), not a file; nothing was written"


def test_any_replaces_whatever_is_there(tmp_path: Path) -> None:
    path = tmp_path / "out.yaml"
    path.write_bytes(b"an old output\n")
    path.chmod(0o640)
    write_atomic(path, b"x\n", ANY)
    assert path.read_bytes() == b"x\n" and stat.S_IMODE(path.stat().st_mode) == 0o640
