"""pyproject.toml lists every subpackage: setuptools cannot discover them beside the remapped examples/."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_is_listed_in_pyproject() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    src = ROOT / "src"
    found = {".".join(init.parent.relative_to(src).parts) for init in src.rglob("__init__.py")}
    found.add("ragjudge.examples")
    # A package left out installs fine in editable mode and breaks `pip install .` (ModuleNotFoundError).
    assert set(setuptools["packages"]) == found


def test_every_template_folder_is_package_data() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    patterns = setuptools["package-data"]["ragjudge"]
    package = ROOT / "src" / "ragjudge"
    shipped = {path for pattern in patterns for path in package.glob(pattern)}
    data = {p for p in package.rglob("*") if p.is_file() and p.suffix in {".j2", ".typed", ".json", ".css", ".js"}}
    assert data - shipped == set()
