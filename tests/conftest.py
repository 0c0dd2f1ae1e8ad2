"""Shared test setup.

`tests` is a package, so pytest imports this file as `tests.conftest` and puts the
repository root on `sys.path` before collecting any test module. That is what lets
tests in subfolders without `__init__.py` (tests/judge, tests/report, ...) import the
shared fakes as `tests.fakes.rag`, even when run alone (`pytest tests/report`).

The fakes' fixtures (`fake_openai`, `fake_github`, `rag_server`, `hayhooks_server`, a real hayhooks process, and
`ai_sdk_server` / `ai_sdk`, a real Vercel AI SDK route run by Node, and `phoenix_server`, a real Arize Phoenix as
the trace store) are registered here, once, as plugins: a test anywhere under tests/ only names them.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import pytest

from ragjudge import masking

pytest_plugins = [
    "tests.fakes.fixtures",
    "tests.fakes.hayhooks_server",
    "tests.fakes.ai_sdk_server",
    "tests.fakes.pydantic_ai_server",
    "tests.fakes.phoenix_server",
]


@pytest.fixture(autouse=True)
def _masking_scope() -> Iterator[None]:
    """Each test starts with no registered secrets, as each process run does."""
    with masking.scope():
        yield


@pytest.fixture(scope="session")
def example_rag_url() -> Iterator[str]:
    """The example RAG service (examples/rag_service.py) on a free loopback port."""
    serve_in_thread = importlib.import_module("ragjudge.examples.rag_service").serve_in_thread
    server, url = serve_in_thread()
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()
