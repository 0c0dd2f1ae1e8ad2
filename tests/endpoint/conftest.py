"""Loopback HTTP servers that misbehave on purpose, and a client wired to them.

A test gives `serve` a responder, a function called once per request with an
`Exchange`; the responder answers through it (`ex.json(...)`, `ex.send(...)`,
`ex.chunked(...)`, `ex.trickle(...)`, `ex.hang(...)`, `ex.drop()`). Every
request is recorded on the returned server (`tests.fakes.responder_server`). Servers
listen on 127.0.0.1 on a free port, in daemon threads, and are stopped when the test ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from tests.fakes._http import free_port
from tests.fakes.responder_server import Responder, ResponderServer

from ragjudge.cases.case import Case
from ragjudge.config.endpoint_config import EndpointConfig
from ragjudge.endpoint.client import EndpointClient


@pytest.fixture
def serve() -> Iterator[Callable[[Responder], ResponderServer]]:
    """`serve(responder)` starts a loopback server (`tests.fakes.responder_server`); all are stopped after the test."""
    started: list[ResponderServer] = []

    def start(responder: Responder) -> ResponderServer:
        server = ResponderServer(responder)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound once, then released)."""
    return free_port()


class SleepRecorder:
    """Stands in for time.sleep: records each delay, waits for none."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def make_client(sleeps: SleepRecorder) -> Callable[..., EndpointClient]:
    """`make_client(url, **endpoint_config)`; retries sleep through `sleeps` unless `sleep=` is given."""

    def build(url: str, *, sleep: Callable[[float], None] | None = None, **config: Any) -> EndpointClient:
        return EndpointClient(EndpointConfig(**config), url, sleep=sleep or sleeps)

    return build


@pytest.fixture
def make_case() -> Callable[..., Case]:
    """`make_case(id=..., question=..., ...)`: a Case with the rest left at neutral values."""

    def build(id: str = "c-1", question: str = "How do I get a refund?", **fields: Any) -> Case:
        values: dict[str, Any] = {
            "expected": None,
            "golden_context_ids": (),
            "category": None,
            "should_answer": True,
            "must_mention": (),
            "must_not_mention": (),
            "source": None,
            "difficulty": None,
            "tags": (),
            "origin": "test.yaml:1",
        }
        values.update(fields)
        return Case(id=id, question=question, **values)

    return build
