"""Fixtures for the model-judge tests: a started fake OpenAI server, a sleep recorder, a log sink."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.judge.openai_helpers import LogSink, Sleeps, by_kind


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    """A FakeOpenAI that answers every judge kind with a valid reply until the test says otherwise."""
    with FakeOpenAI(by_kind()) as server:
        yield server


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def sink() -> LogSink:
    return LogSink()
