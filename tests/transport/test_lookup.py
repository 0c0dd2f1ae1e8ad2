"""Name lookups under the attempt's deadline: a resolver that does not answer cannot hold a call past it.

The resolver stands in for the C library's: `socket.getaddrinfo` is replaced for a few reserved names
(`.invalid` and `.test` never resolve on a real network), and every other name goes to the real one.
The HTTP on the other side is real: loopback servers, the endpoint client, the judge through the SDK.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from ragjudge.config.endpoint_config import EndpointConfig
from ragjudge.endpoint.client import EndpointClient
from ragjudge.judge.chat import CallFailed, ChatCaller, Target
from ragjudge.judge.replies import response_format
from ragjudge.transport import deadline, lookup
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.rag import RagServer, answer, make_case
from tests.judge.openai_helpers import Sleeps, judge_config

STALLED = "stalled.invalid"
"""Its lookup never ends (until the test does)."""
GONE = "gone.invalid"
"""Does not exist."""
TWICE = "twice.test"
"""Two addresses: 127.0.0.2, where nothing listens, then 127.0.0.1."""


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str | bytes]]:
    real = socket.getaddrinfo
    release = threading.Event()
    asked: list[str | bytes] = []

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(host)
        name = host.decode() if isinstance(host, bytes) else host
        if name == STALLED:
            release.wait(30)
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        if name == GONE:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        if name == TWICE:
            return real("127.0.0.2", port, *args, **kwargs) + real("127.0.0.1", port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield asked
    release.set()  # the abandoned lookup threads end


def test_a_lookup_that_never_answers_ends_at_the_deadline(resolver: list[str | bytes]) -> None:
    started = time.monotonic()
    with deadline.limit(0.3), pytest.raises(lookup.LookupTimedOut) as timed_out:
        lookup.addresses(STALLED, 80)
    assert 0.25 < time.monotonic() - started < 1.0
    assert str(timed_out.value) == "looking up stalled.invalid did not finish within the deadline"
    assert resolver == [STALLED.encode()]  # an ASCII name goes as bytes: no idna codec


def test_a_stop_ends_the_wait_for_a_lookup(resolver: list[str | bytes]) -> None:
    stopper = threading.Timer(0.2, deadline.stop)
    started = time.monotonic()
    try:
        stopper.start()
        with deadline.limit(30), pytest.raises(lookup.LookupTimedOut):
            lookup.addresses(STALLED, 80)
        assert time.monotonic() - started < 1.5
    finally:
        stopper.cancel()
        deadline.reset()


def test_answers_and_failures_come_back_as_the_resolver_gave_them(resolver: list[str | bytes]) -> None:
    with deadline.limit(5):
        found = lookup.addresses(TWICE, 8080)
        with pytest.raises(socket.gaierror, match="Name or service not known"):
            lookup.addresses(GONE, 80)
        assert [entry[4] for entry in lookup.addresses("127.0.0.1", 80)] == [("127.0.0.1", 80)]
    assert [entry[4][0] for entry in found] == ["127.0.0.2", "127.0.0.1"]
    assert "127.0.0.1" not in resolver  # an address needs no lookup thread (it is asked directly)
    assert lookup.numeric("::1") and lookup.numeric("10.0.0.1") and not lookup.numeric("example.com")


def test_a_run_reaching_a_name_does_not_import_the_idna_codec() -> None:
    # The codec's first use imports tables that cost 25-30 ms before the first endpoint request.
    code = (
        "import sys\n"
        "from ragjudge.transport import deadline, lookup\n"
        "with deadline.limit(5):\n"
        "    lookup.addresses('localhost', 80)\n"
        "print('encodings.idna' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"


# --- the endpoint client ---------------------------------------------------------------------------


def _endpoint(url: str, **config: Any) -> EndpointClient:
    return EndpointClient(EndpointConfig(**config), url, sleep=lambda s: None)


def test_an_endpoint_whose_name_never_resolves_times_out_at_its_deadline(resolver: list[str | bytes]) -> None:
    client = _endpoint(f"http://{STALLED}:9/ask", timeout_s=0.5, retries=0)
    started = time.monotonic()
    result = client.call(make_case())
    assert result.error == "endpoint error: timeout after 0.5 s (1 attempt)"
    assert time.monotonic() - started < 1.5


def test_an_endpoint_name_that_does_not_exist_says_so(resolver: list[str | bytes]) -> None:
    result = _endpoint(f"http://{GONE}:9/ask", timeout_s=2, retries=0).call(make_case())
    assert result.error == f"endpoint error: cannot resolve host {GONE} after 1 attempt"


def test_an_endpoint_name_is_tried_at_each_of_its_addresses(resolver: list[str | bytes]) -> None:
    question = "How do I get a refund?"
    with RagServer({question: answer("Refunds take 5 days.", ["d1"], {"d1": "Refunds take 5 days."})}) as rag:
        url = rag.url.replace("127.0.0.1", TWICE)
        result = _endpoint(url, timeout_s=5, retries=0).call(make_case("c1", question))
    assert result.error is None and result.trace is not None
    assert result.trace.answer == "Refunds take 5 days."


# --- the judge --------------------------------------------------------------------------------------

COMPLETION = {"grounding": 5}
MESSAGES = [{"role": "user", "content": "Judge this."}]


def _complete(base_url: str, **config: Any) -> str:
    caller = ChatCaller(judge_config(base_url, None, **config), sleep=Sleeps())
    return caller.complete(Target("m", base_url), MESSAGES, response_format("rubric", ("grounding",))).content


def test_a_judge_whose_name_never_resolves_times_out_at_its_deadline(resolver: list[str | bytes]) -> None:
    started = time.monotonic()
    with pytest.raises(CallFailed) as failed:
        _complete(f"http://{STALLED}:9/v1", timeout_s=1, max_retries=0)
    assert failed.value.reason == "judge call failed: timeout after 1 s (1 attempts)"
    assert time.monotonic() - started < 2.0


def test_a_judge_name_that_does_not_exist_cannot_be_connected_to(resolver: list[str | bytes]) -> None:
    with pytest.raises(CallFailed) as failed:
        _complete(f"http://{GONE}:9/v1", timeout_s=2, max_retries=0)
    assert failed.value.reason == f"judge call failed: cannot connect to {GONE}"


def test_a_judge_name_is_tried_at_each_of_its_addresses(resolver: list[str | bytes]) -> None:
    with FakeOpenAI(Reply(content=json.dumps(COMPLETION))) as fake:
        content = _complete(fake.base_url.replace("127.0.0.1", TWICE), timeout_s=5, max_retries=0)
        assert fake.call_count == 1
    assert json.loads(content) == COMPLETION
