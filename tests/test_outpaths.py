"""Output paths are checked before the first call: exit 2 naming the flag, never a run thrown away."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from ragjudge.cli import main
from ragjudge.errors import UsageError
from ragjudge.outpaths import check_output_path
from tests.fakes.rag import RagServer, answer


def test_a_missing_parent_folder_is_created(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "report.json"
    check_output_path("--report", target)
    assert target.parent.is_dir()
    assert not target.exists()  # the probe leaves nothing behind


def test_an_existing_file_is_left_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("previous", encoding="utf-8")
    check_output_path("--report", target)
    assert target.read_text(encoding="utf-8") == "previous"


def test_a_folder_is_refused_naming_the_flag(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as refused:
        check_output_path("--report", tmp_path)
    assert refused.value.message == f"--report {tmp_path}: is a folder, not a file"


def test_a_path_under_a_regular_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    target = tmp_path / "file.txt" / "sub" / "comment.md"
    with pytest.raises(UsageError) as refused:
        check_output_path("--comment-file", target)
    assert refused.value.message == f"--comment-file {target}: {tmp_path / 'file.txt'} is a file, not a folder"


def test_a_file_that_cannot_be_written_is_refused() -> None:
    # /proc/version refuses writes even to root (CI runs as root, so chmod cannot stand in for it).
    with pytest.raises(UsageError) as refused:
        check_output_path("--log", Path("/proc/version"))
    assert refused.value.message.startswith("--log /proc/version: not writable (")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through a read-only mode")
def test_a_read_only_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(UsageError) as refused:
            check_output_path("--report", folder / "report.json")
    finally:
        folder.chmod(0o700)
    assert refused.value.message == f"--report {folder / 'report.json'}: not writable (Permission denied)"


@pytest.mark.parametrize("flag", ["--report", "--comment-file", "--log"])
def test_run_checks_every_output_before_the_first_call(
    tmp_path: Path, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump([{"id": "c1", "question": "q?"}]), encoding="utf-8")
    with RagServer({"q?": answer("a", ["p1"], {"p1": "a"})}) as rag:
        config = {"endpoint": {"url": rag.url}, "cases": ["cases.yaml"]}
        (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        good = {"--report": tmp_path / "r.json", "--comment-file": tmp_path / "c.md", "--log": tmp_path / "l.jsonl"}
        args = ["run", "--config", str(tmp_path / "ragjudge.yml")]
        for name, path in good.items():
            args += [name, str(tmp_path if name == flag else path)]
        code = main(args)
        assert rag.seen == []  # refused before any endpoint (or judge) call
    err = capsys.readouterr().err
    assert code == 2
    assert f"ragjudge: error: {flag} {tmp_path}: is a folder, not a file" in err
    assert not any(p.exists() for p in good.values())


def test_run_creates_missing_output_folders(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump([{"id": "c1", "question": "q?"}]), encoding="utf-8")
    with RagServer({"q?": answer("a", ["p1"], {"p1": "a"})}) as rag:
        config = {"endpoint": {"url": rag.url}, "cases": ["cases.yaml"]}
        (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        report = tmp_path / "new" / "deep" / "report.json"
        main(["run", "--config", str(tmp_path / "ragjudge.yml"), "--report", str(report)])
    assert json.loads(report.read_text(encoding="utf-8"))["suite"]["cases"] == 1


@pytest.mark.parametrize("flag", ["--junit", "--html"])
@pytest.mark.parametrize("bad", ["folder", "under a file"])
def test_run_checks_junit_and_html_before_the_first_call(
    tmp_path: Path, flag: str, bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump([{"id": "c1", "question": "q?"}]), encoding="utf-8")
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    target = tmp_path if bad == "folder" else tmp_path / "file.txt" / "out"
    with RagServer({"q?": answer("a", ["p1"], {"p1": "a"})}) as rag:
        config = {"endpoint": {"url": rag.url}, "cases": ["cases.yaml"]}
        (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        report = tmp_path / "r.json"
        code = main(["run", "--config", str(tmp_path / "ragjudge.yml"), "--report", str(report), flag, str(target)])
        assert rag.seen == []  # refused before any endpoint (or judge) call
    why = "is a folder, not a file" if bad == "folder" else f"{tmp_path / 'file.txt'} is a file, not a folder"
    assert (code, capsys.readouterr().err.splitlines()[0]) == (2, f"ragjudge: error: {flag} {target}: {why}")
    assert not report.exists()


@pytest.mark.parametrize("flag", ["--report", "--comment-file", "--junit", "--html"])
def test_merge_checks_every_output_before_reading_the_shards(
    tmp_path: Path, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump({"endpoint": {"url": "http://127.0.0.1:9"}}), "utf-8")
    # The shard does not exist: a check made after reading it would say so instead.
    args = ["merge", "--config", str(tmp_path / "ragjudge.yml"), str(tmp_path / "missing.json"), flag, str(tmp_path)]
    code = main(args)
    assert (code, capsys.readouterr().err.splitlines()[0]) == (
        2,
        f"ragjudge: error: {flag} {tmp_path}: is a folder, not a file",
    )


def test_dedupe_checks_its_output_before_writing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump([{"id": "c1", "question": "q?"}]), encoding="utf-8")
    code = main(["dedupe", str(tmp_path / "cases.yaml"), "--out", str(tmp_path)])
    assert (code, capsys.readouterr().err.splitlines()[0]) == (
        2,
        f"ragjudge: error: --out {tmp_path}: is a folder, not a file",
    )


@pytest.mark.parametrize("bad", ["folder", "under a file"])
def test_cases_import_bad_checks_its_target_before_reading(
    tmp_path: Path, bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.jsonl").write_text('{"question": "q?", "answer": "a"}\n', encoding="utf-8")
    target = tmp_path if bad == "folder" else tmp_path / "bad.jsonl" / "cases.yaml"
    code = main(["cases", "import-bad", str(tmp_path / "bad.jsonl"), "--into", str(target)])
    why = "is a folder, not a file" if bad == "folder" else f"{tmp_path / 'bad.jsonl'} is a file, not a folder"
    assert (code, capsys.readouterr().err.splitlines()[0]) == (2, f"ragjudge: error: --into {target}: {why}")
