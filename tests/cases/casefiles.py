"""Case files written for the tests, and the loader's error caught."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragjudge.cases.caseset import load_cases
from ragjudge.errors import CaseFileError, ExitCode


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(path: Path, *items: object) -> Path:
    return write(path, "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items))


def load_error(*paths: Path) -> CaseFileError:
    with pytest.raises(CaseFileError) as info:
        load_cases(list(paths))
    assert info.value.exit_code == ExitCode.BAD_INPUT
    return info.value
