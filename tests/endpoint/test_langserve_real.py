"""`ragjudge probe` and `ragjudge run` against a real LangServe 0.3 server, wired from scratch.

Optional: langserve is not among the test extras (it brings langchain-core and langsmith, whose pytest plugin
would load into every test run). `pip install "langserve[server]>=0.3,<0.4"` to run these; skipped otherwise.
The app is tests/fakes/langserve_app/serve_rag.py, on a free loopback port, with tracing off.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import yaml
from tests.fakes._http import free_port

from ragjudge.cli import main

APP = Path(__file__).resolve().parents[1] / "fakes" / "langserve_app" / "serve_rag.py"
BODY = '{"input": {"question": {{ question | tojson }}}}'


@pytest.fixture(scope="module")
def langserve_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if importlib.util.find_spec("langserve") is None:
        pytest.skip('langserve is not installed (pip install "langserve[server]>=0.3,<0.4")')
    home = tmp_path_factory.mktemp("langserve")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGCHAIN_", "LANGSMITH_", "OPENAI_"))}
    env = {k: v for k, v in env.items() if "proxy" not in k.lower()}
    env.update({"HOME": str(home), "LANGCHAIN_TRACING_V2": "false", "NO_PROXY": "127.0.0.1"})
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (home / "server.log").open("wb")
    process = subprocess.Popen([sys.executable, str(APP), str(port)], cwd=home, env=env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"langserve did not start:\n{(home / 'server.log').read_text()}")
            try:
                if requests.get(f"{url}/rag/input_schema", timeout=2).ok:
                    break
            except requests.ConnectionError:
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    cases = [{"id": "refund", "question": "How long do refunds take?", "golden_context_ids": ["doc-refund-1"]}]
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases), encoding="utf-8")
    return tmp_path


def probe(ws: Path, capsys: pytest.CaptureFixture[str], endpoint: dict[str, object]) -> tuple[int, list[str]]:
    (ws / "ragjudge.yml").write_text(yaml.safe_dump({"endpoint": endpoint, "cases": ["cases.yaml"]}), encoding="utf-8")
    code = main(["probe"])
    return code, capsys.readouterr().out.splitlines()


def hints(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("  hint: ")]


def test_probe_leads_from_the_bare_route_to_a_clean_mapping(
    ws: Path, capsys: pytest.CaptureFixture[str], langserve_url: str
) -> None:
    code, lines = probe(ws, capsys, {"url": f"{langserve_url}/rag"})
    assert code == 1
    assert hints(lines) == [
        "  hint: /rag is not a route, but GET /rag/input_schema answers as a LangServe chain does: POST to "
        "/rag/invoke (set endpoint.url to end in /rag/invoke)"
    ]
    code, lines = probe(ws, capsys, {"url": f"{langserve_url}/rag/invoke"})
    assert hints(lines) == [
        '  hint: the chain\'s input schema (GET /rag/input_schema) is {"properties":{"question":{"title":"Question",'
        '"type":"string"}},"required":["question"],"title":"Question","type":"object"}: set endpoint.body to '
        'something like \'{"input": {"question": {{ question | tojson }}}}\''
    ]
    code, lines = probe(ws, capsys, {"url": f"{langserve_url}/rag/invoke", "body": BODY})
    size = next(line for line in lines if line.startswith("  content type: "))
    assert int(size.split(", ")[1].split()[0]) > 65_536  # read whole, as a run reads it
    assert "  answer: nothing (tried answer): did you mean output.answer?" in lines
    assert "  retrieved: nothing (tried retrieved, sources, contexts): did you mean output.context?" in lines
    block = lines[lines.index("  response:") + 1 :]
    response = dict(line.strip().split(": ", 1) for line in block if line.startswith("    "))
    assert response == {
        "answer": "output.answer",
        "retrieved": "output.context",
        "retrieved_id": "metadata.source",
        "retrieved_title": "metadata.title",
    }
    code, lines = probe(ws, capsys, {"url": f"{langserve_url}/rag/invoke", "body": BODY, "response": response})
    assert lines[-1] == "result: the reply maps cleanly", "\n".join(lines[-12:])
    assert code == 0


def test_a_failing_chain_is_the_service_failing(
    ws: Path, capsys: pytest.CaptureFixture[str], langserve_url: str
) -> None:
    code, lines = probe(ws, capsys, {"url": f"{langserve_url}/boom/invoke", "body": BODY})
    assert code == 1
    assert lines[-1] == (
        "  the service failed while answering (a 5xx is its own error, not a malformed request): its logs say why; "
        "probe again once it answers"
    )


def test_run_with_the_readme_mapping_passes(ws: Path, capsys: pytest.CaptureFixture[str], langserve_url: str) -> None:
    response = {"answer": "output.answer", "retrieved": "output.context", "retrieved_id": "metadata.source"}
    endpoint = {"url": f"{langserve_url}/rag/invoke", "body": BODY, "response": response, "retries": 0}
    (ws / "ragjudge.yml").write_text(yaml.safe_dump({"endpoint": endpoint, "cases": ["cases.yaml"]}), encoding="utf-8")
    code = main(["run", "--report", "r.json"])
    out = capsys.readouterr().out
    report = json.loads((ws / "r.json").read_text(encoding="utf-8"))
    assert report["warnings"] == []
    assert report["cases"][0]["trace"]["retrieved_ids"][0] == "doc-refund-1"
    assert code == 0, out
