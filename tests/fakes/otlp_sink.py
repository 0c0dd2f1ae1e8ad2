"""A loopback OTLP/HTTP trace receiver for tests, written apart from ragjudge's own: it decodes each
`POST /v1/traces` with `opentelemetry-proto` and keeps the requests, or answers the status it is told to."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


class OtlpSink:
    """`with OtlpSink() as sink:` then export to `sink.url`; `sink.spans()` is every span received."""

    def __init__(self, status: int = 200, port: int = 0) -> None:
        self.status = status
        self.requests: list[ExportTraceServiceRequest] = []
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path == "/v1/traces" and self.headers.get("Content-Type") == "application/x-protobuf":
                    request = ExportTraceServiceRequest()
                    request.ParseFromString(body)
                    sink.requests.append(request)
                self.send_response(sink.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> OtlpSink:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def spans(self) -> list[Any]:
        return [s for r in self.requests for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans]
