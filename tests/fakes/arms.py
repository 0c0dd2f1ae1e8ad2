"""Loopback RAG arms for the canary tests: arms that are slow or unfaithful on purpose, a recorder of the
order requests arrive in, and the bundled example service as an arm. (Many arms behind Kubernetes
service names, for `ragjudge serve`: tests/fakes/cluster.py.)"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from typing import Any

from ragjudge.examples.rag_service import RagHandler, make_server

from tests.fakes._http import Incoming, LoopbackServer, Outgoing
from tests.fakes.rag import answer

PASSAGE = "Refunds are issued within 3 business days after the returned item is inspected."
UNSUPPORTED = "Every customer also receives a free flight to the moon with each order."


def faithful_reply() -> dict[str, Any]:
    """An answer the offline judge fully supports (faithfulness 1.0)."""
    return answer(PASSAGE, ["doc-refund"], {"doc-refund": PASSAGE})


def unfaithful_reply() -> dict[str, Any]:
    """One supported and one unsupported sentence (faithfulness 0.5)."""
    return answer(f"{PASSAGE} {UNSUPPORTED}", ["doc-refund"], {"doc-refund": PASSAGE})


class ArmServer(LoopbackServer):
    """A RAG arm answering every question alike, after `delay_s`; records which questions it saw, in order.

    `journal` (shared between arms) records `(name, question)` as requests arrive.
    """

    def __init__(
        self,
        name: str,
        reply: dict[str, Any] | None = None,
        delay_s: float = 0.0,
        journal: list[tuple[str, str]] | None = None,
    ) -> None:
        super().__init__()
        self.name = name
        self.reply = reply if reply is not None else faithful_reply()
        self.delay_s = delay_s
        self.journal = journal if journal is not None else []
        self.lock = threading.Lock()

    def handle(self, req: Incoming) -> Outgoing:
        body = req.json() or {}
        with self.lock:
            self.journal.append((self.name, str(body.get("question"))))
        if self.delay_s:
            time.sleep(self.delay_s)
        return Outgoing(200, self.reply)

    @property
    def ask_url(self) -> str:
        return f"{self.url}/ask"


@contextmanager
def example_service(delay_s: float = 0.0) -> Iterator[str]:
    """The bundled example RAG service on a free port, optionally `delay_s` slower per request."""
    server: ThreadingHTTPServer = make_server()
    if delay_s:

        class Slow(RagHandler):
            def do_POST(self) -> None:
                time.sleep(delay_s)
                super().do_POST()

        server.RequestHandlerClass = Slow
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    try:
        yield f"http://{host!s}:{port}/ask"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
