"""`ragjudge probe` reads a reply with the bounded JSON reader `run` and the report readers use."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ragjudge.cli import main
from tests.fakes.raw_server import RawServer, http_reply


@pytest.mark.parametrize("depth", [990, 100_000])
def test_a_reply_nested_deep_is_named_not_a_recursion_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], depth: int
) -> None:
    monkeypatch.chdir(tmp_path)
    body = ('{"answer": ' + "[" * depth + "]" * depth + "}").encode()
    with RawServer(lambda request: http_reply(body)) as server:
        config = {"endpoint": {"url": server.url}}
        (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        code = main(["probe", "--question", "How long do refunds take?"])
    out, err = capsys.readouterr()
    assert code == 1 and "internal error" not in err
    assert "result: the reply is nested more than 64 deep: ragjudge reads JSON objects" in out
