"""pyproject.toml lists every subpackage and data folder: setuptools cannot discover them beside examples/."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


SHIPPED_EXAMPLES = {"cases", "corpus", "workflows"}
"""The example folders `ragjudge demo` and the docs ship; examples/deploy stays in the repository."""


def test_every_subpackage_and_data_folder_is_listed_in_pyproject() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    src = ROOT / "src"
    folders = [d for d in (src / "ragjudge").rglob("*") if d.is_dir() and d.name != "__pycache__"]
    found = {".".join(d.relative_to(src).parts) for d in [src / "ragjudge", *folders]}
    found |= {"ragjudge.examples", *(f"ragjudge.examples.{name}" for name in SHIPPED_EXAMPLES)}
    # A package left out installs fine in editable mode and breaks `pip install .` (ModuleNotFoundError); a
    # data folder left out is installed only with a warning that setuptools will stop doing it.
    assert set(setuptools["packages"]) == found


def test_every_template_folder_is_package_data() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    package = ROOT / "src" / "ragjudge"
    shipped = {
        path
        for name, patterns in setuptools["package-data"].items()
        if not name.startswith("ragjudge.examples")
        for pattern in patterns
        for path in package.joinpath(*name.split(".")[1:]).glob(pattern)
    }
    data = {p for p in package.rglob("*") if p.is_file() and p.suffix in {".j2", ".typed", ".json", ".css", ".js"}}
    assert data - shipped == set()
