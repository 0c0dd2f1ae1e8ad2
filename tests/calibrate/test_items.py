"""The bias items file of `ragjudge calibrate --position-bias/--length-bias`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragjudge.calibrate.items import load_bias_items
from ragjudge.errors import CaseFileError


def test_items_file_errors_name_the_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text(
        json.dumps({"id": 1, "claim": "c", "passages": ["a", "b"]}) + "\n" + json.dumps({"id": 2, "claim": "c"}) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(CaseFileError) as err:
        load_bias_items(path)
    assert str(err.value) == f"{path}:2: field 'passages': Field required"
    path.write_text(json.dumps({"id": 1, "claim": " ", "passages": ["a"]}) + "\n", encoding="utf-8")
    with pytest.raises(CaseFileError, match=r":1: field 'claim': claim is empty"):
        load_bias_items(path)
    path.write_text(json.dumps({"id": 1, "claim": "c", "passages": []}) + "\n", encoding="utf-8")
    with pytest.raises(CaseFileError, match="needs at least one passage"):
        load_bias_items(path)
    path.write_text("", encoding="utf-8")
    with pytest.raises(CaseFileError, match="no items"):
        load_bias_items(path)
