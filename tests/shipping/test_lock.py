"""requirements.lock (installed by the Dockerfile with --require-hashes) still satisfies pyproject.toml."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements.lock"

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)")


def parse_lock(text: str) -> dict[str, tuple[Version, list[str]]]:
    """name -> (pinned version, sha256 hashes), from pip-compile's --generate-hashes format."""
    pins: dict[str, tuple[Version, list[str]]] = {}
    current: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _PIN.match(line)
        if match:
            current = canonicalize_name(match.group(1))
            assert current not in pins, f"requirements.lock pins {current} twice"
            pins[current] = (Version(match.group(2)), [])
            line = line[match.end() :]
        for digest in re.findall(r"--hash=sha256:([0-9a-f]{64})", line):
            assert current is not None, f"a hash before any pin: {raw!r}"
            pins[current][1].append(digest)
    return pins


def runtime_requirements() -> list[Requirement]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [Requirement(spec) for spec in data["project"]["dependencies"]]


@pytest.fixture(scope="module")
def pins() -> dict[str, tuple[Version, list[str]]]:
    return parse_lock(LOCK.read_text(encoding="utf-8"))


def test_every_runtime_dependency_is_pinned_within_its_range(pins: dict[str, tuple[Version, list[str]]]) -> None:
    problems = []
    for req in runtime_requirements():
        name = canonicalize_name(req.name)
        if name not in pins:
            problems.append(f"{req.name} is not in requirements.lock")
        elif not req.specifier.contains(pins[name][0], prereleases=True):
            problems.append(f"requirements.lock pins {name}=={pins[name][0]}, outside pyproject's {req}")
    assert not problems, "; ".join(problems) + " (regenerate it: see docs/releases.md)"


def test_every_pin_is_exact_and_hashed(pins: dict[str, tuple[Version, list[str]]]) -> None:
    assert len(pins) >= len(runtime_requirements())
    unhashed = [name for name, (_, hashes) in pins.items() if not hashes]
    assert unhashed == []


def test_the_lock_names_no_local_index_or_path() -> None:
    # The lock is used on GitHub's runners and in the image build: a host's file:// index,
    # --find-links or a local path would break there.
    text = LOCK.read_text(encoding="utf-8")
    assert "--find-links" not in text and "--index-url" not in text and "file:" not in text


def test_ragjudge_itself_is_not_pinned(pins: dict[str, tuple[Version, list[str]]]) -> None:
    # The Dockerfile installs ragjudge from the tree with --no-deps after the lock.
    assert "ragjudge" not in pins


def test_parse_lock_reads_pins_and_hashes() -> None:
    text = "a-b==1.2 \\\n    --hash=sha256:" + "0" * 64 + " \\\n    --hash=sha256:" + "1" * 64 + "\n    # via x\nc==3\n"
    parsed = parse_lock(text)
    assert parsed == {"a-b": (Version("1.2"), ["0" * 64, "1" * 64]), "c": (Version("3"), [])}


def test_the_dockerfile_installs_the_lock_with_hashes() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "COPY requirements.lock" in dockerfile
    assert "pip install --require-hashes --no-deps -r /app/requirements.lock" in dockerfile
    assert "pip install --no-deps /app/src-copy" in dockerfile
