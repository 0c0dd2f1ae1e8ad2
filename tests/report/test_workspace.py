"""Paths relative to the workspace, compared as real paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragjudge.report.workspace import workspace_path


def test_a_file_under_the_workspace_is_relative_to_it(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "a.yaml").write_text("[]", encoding="utf-8")
    assert workspace_path(tmp_path / "cases" / "a.yaml", str(tmp_path)) == "cases/a.yaml"
    assert workspace_path(tmp_path / "cases" / ".." / "cases" / "a.yaml", str(tmp_path)) == "cases/a.yaml"


def test_a_workspace_reached_through_a_link_still_holds_its_files(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "cases").mkdir(parents=True)
    (real / "cases" / "a.yaml").write_text("[]", encoding="utf-8")
    link = tmp_path / "work"
    link.symlink_to(real, target_is_directory=True)
    # The runner names the workspace by its link; the case file was read by its real path (or the other way).
    assert workspace_path(real / "cases" / "a.yaml", str(link)) == "cases/a.yaml"
    assert workspace_path(link / "cases" / "a.yaml", str(real)) == "cases/a.yaml"


def test_a_file_outside_is_none(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    assert workspace_path(tmp_path / "elsewhere.yaml", str(tmp_path / "w")) is None


def test_a_relative_path_is_read_from_the_working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    assert workspace_path("cases/a.yaml") == "cases/a.yaml"
