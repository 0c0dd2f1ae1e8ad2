"""The example RAG service (examples/rag_service.py), exercised over real HTTP."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import requests

SERVICE_PATH = Path(__file__).resolve().parents[2] / "examples" / "rag_service.py"


def _load_service() -> ModuleType:
    """Import examples/rag_service.py by path, so the test needs no installed package."""
    name = "ragjudge_example_rag_service"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SERVICE_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ask_url() -> Iterator[str]:
    server, url = _load_service().serve_in_thread()
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


def test_url_shape(ask_url: str) -> None:
    assert ask_url.startswith("http://127.0.0.1:")
    assert ask_url.endswith("/ask")


def test_in_scope_answer_shape(ask_url: str) -> None:
    resp = requests.post(ask_url, json={"question": "退货的时候赠品也要一起寄回吗？"}, timeout=10)
    assert resp.status_code == 200
    assert resp.headers["Content-Type"].startswith("application/json")
    body = resp.json()
    assert set(body) == {"answer", "refused", "confidence", "retrieved", "citations", "latencyMs", "costUsd"}
    assert body["refused"] is False
    assert body["confidence"] in {"high", "medium", "low"}
    assert "赠品" in body["answer"]
    assert 1 <= len(body["retrieved"]) <= 3
    assert all(set(p) == {"id", "title", "text"} for p in body["retrieved"])
    assert body["retrieved"][0]["id"] == "doc-refund-1"
    assert body["citations"] == [{"source": "doc-refund-1", "title": body["retrieved"][0]["title"]}]
    assert isinstance(body["latencyMs"], int) and body["latencyMs"] >= 0
    assert isinstance(body["costUsd"], float) and body["costUsd"] >= 0


def test_answer_is_extracted_from_the_top_passage(ask_url: str) -> None:
    body = requests.post(ask_url, json={"question": "How do I start a return?"}, timeout=10).json()
    top = body["retrieved"][0]
    assert top["id"] == "doc-refund-4"
    assert body["answer"].startswith("To start a return")
    assert body["answer"].split(". ")[0] in top["text"]


@pytest.mark.parametrize(
    ("question", "decline"),
    [
        ("What will the weather be like in Shanghai this weekend?", "Sorry, I don't have information about that."),
        ("最近买哪只股票比较好？", "抱歉，知识库中没有相关信息。"),
    ],
)
def test_out_of_scope_is_refused(ask_url: str, question: str, decline: str) -> None:
    resp = requests.post(ask_url, json={"question": question}, timeout=10)
    assert resp.status_code == 200
    body = resp.json()
    assert body["refused"] is True
    assert body["confidence"] == "none"
    assert body["answer"] == decline
    assert body["citations"] == []


@pytest.mark.parametrize(
    "payload",
    [b"{not json", b'{"q": "hi"}', b'{"question": "   "}', b'["question"]', b'{"question": 3}'],
)
def test_bad_body_is_400(ask_url: str, payload: bytes) -> None:
    resp = requests.post(ask_url, data=payload, headers={"Content-Type": "application/json"}, timeout=10)
    assert resp.status_code == 400
    assert resp.headers["Content-Type"].startswith("application/json")
    assert "error" in resp.json()


def test_healthz(ask_url: str) -> None:
    resp = requests.get(ask_url.replace("/ask", "/healthz"), timeout=10)
    assert resp.status_code == 200
    assert resp.text == "ok"


def test_unknown_route_is_404(ask_url: str) -> None:
    resp = requests.get(ask_url.replace("/ask", "/nope"), timeout=10)
    assert resp.status_code == 404
