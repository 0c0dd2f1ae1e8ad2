"""Shared test setup.

`tests` is a package, so pytest imports this file as `tests.conftest` and puts the
repository root on `sys.path` before collecting any test module. That is what lets
tests in subfolders without `__init__.py` (tests/judge, tests/report, ...) import the
shared helpers as `tests.helpers_rag`, even when run alone (`pytest tests/report`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers_rag import RagServer


@pytest.fixture
def rag_server() -> Iterator[RagServer]:
    """A started loopback RAG server with no replies yet: fill `rag_server.replies` in the test."""
    with RagServer({}) as server:
        yield server
