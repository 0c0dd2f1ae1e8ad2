"""What the tests of `ragjudge probe` share: a config and cases written for a server, probe run in-process, and
the parts of its output read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.cli import main

HAYHOOKS_RESPONSE = {
    "answer": "result.answer_builder.answers.0.data",
    "retrieved": "result.answer_builder.answers.0.documents",
    "retrieved_id": "meta.doc_id",
}


def configure(folder: Path, url: str, **endpoint: Any) -> None:
    config: dict[str, Any] = {"endpoint": {"url": url, **endpoint}}
    cases = [
        {"id": "refund", "question": "How long do refunds take?"},
        {"id": "stocks", "question": "明天股市会涨吗？", "category": "超纲"},
    ]
    (folder / "cases.yaml").write_text(yaml.safe_dump(cases, allow_unicode=True), encoding="utf-8")
    config["cases"] = ["cases.yaml"]
    (folder / "ragjudge.yml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")


def probe(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["probe", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def section(out: str, title: str) -> list[str]:
    lines = out.split("\n\n")
    block = next(b for b in lines if b.startswith(title))
    return block.splitlines()


def hints(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("  hint: ")]


def configure_case(folder: Path, url: str, case: dict[str, Any], **endpoint: Any) -> None:
    (folder / "cases.yaml").write_text(yaml.safe_dump([case], allow_unicode=True), encoding="utf-8")
    config = {"endpoint": {"url": url, **endpoint}, "cases": ["cases.yaml"]}
    (folder / "ragjudge.yml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")


REFUND_CASE = {"id": "refund", "question": "How long do refunds take?", "golden_context_ids": ["doc-refund-1"]}
