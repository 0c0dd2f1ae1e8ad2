"""The traces benchmark: `ragjudge run` with and without `traces:`, against a loopback RAG service that exports
its spans with the real OpenTelemetry SDK (its `BatchSpanProcessor`, to ragjudge's receiver), like a CI job.

    python bench/traces_bench.py --cases 400 --endpoint-ms 50 --concurrency 16 --bsp-ms 100
    python bench/traces_bench.py --cases 400 --extra-spans 247      # memory at 100,000 spans

The service runs in a process of its own (`serve`), so its span export costs nothing in the measured process's
CPU. Its reply is the answer alone; its spans are a server span, a GenAI retrieval span with the case's
document, and a model span with token usage. `--bsp-ms` is the exporter's schedule delay
(`OTEL_BSP_SCHEDULE_DELAY`, 5000 ms by default in the SDK): a case's spans come at most that long after its
reply, and ragjudge waits for them. Printed, for each run: wall time, CPU ms per case, peak RSS, and with
traces the cases whose recall came from the trace; then the overheads. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from gate_bench import run_gate


def serve(port: int, otlp: str | None, endpoint_ms: float, bsp_ms: int, extra_spans: int = 0) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.trace import SpanKind
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    provider = TracerProvider()
    if otlp:
        exporter = OTLPSpanExporter(endpoint=f"{otlp}/v1/traces")
        # A queue that holds every span of the busiest moment: the SDK drops spans past `max_queue_size` (2048).
        queue = max(2048, 1000 * (extra_spans + 3))
        processor = BatchSpanProcessor(exporter, schedule_delay_millis=bsp_ms, max_queue_size=queue)
        provider.add_span_processor(processor)
    tracer = provider.get_tracer("bench")
    propagator = TraceContextTextMapPropagator()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            doc = body["question"].split()[-1]
            context = propagator.extract({k.lower(): v for k, v in self.headers.items()})
            with tracer.start_as_current_span("POST /ask", context=context, kind=SpanKind.SERVER):
                documents = json.dumps([{"id": doc, "content": f"The answer to {doc} is in this passage."}])
                attrs = {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": documents}
                with tracer.start_as_current_span("retrieval", attributes=attrs):
                    pass
                time.sleep(endpoint_ms / 1000)
                usage = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 100}
                with tracer.start_as_current_span("chat", attributes=usage):
                    pass
                # The spans a busy framework adds (middleware, components, HTTP clients), each with some text.
                for k in range(extra_spans):
                    with tracer.start_as_current_span(f"step {k}", attributes={"detail": "x" * 200}):
                        pass
            reply = json.dumps({"answer": f"The answer to {doc} is in this passage."}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def measure(args: argparse.Namespace, traced: bool) -> dict[str, Any]:
    port, receiver = free_port(), free_port()
    otlp = f"http://127.0.0.1:{receiver}" if traced else ""
    command = [sys.executable, __file__, "serve", "--port", str(port), "--endpoint-ms", str(args.endpoint_ms)]
    command += ["--extra-spans", str(args.extra_spans)]
    service = subprocess.Popen([*command, "--otlp", otlp, "--bsp-ms", str(args.bsp_ms)])
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        with tempfile.TemporaryDirectory(prefix="traces-bench-") as tmp:
            folder = Path(tmp)
            cases = [
                {"id": f"c{i}", "question": f"Where is doc-{i}", "golden_context_ids": [f"doc-{i}"]}
                for i in range(args.cases)
            ]
            (folder / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
            config: dict[str, Any] = {
                "endpoint": {"url": f"http://127.0.0.1:{port}/ask", "concurrency": args.concurrency},
                "judge": {"provider": "offline"},
                "cases": ["cases.json"],
                # No rule on recall: without traces it is unknown (the reply shows no passages), and both runs
                # should do the same work but for the traces.
                "gate": {"case": {"latency_ms": "<= 600000"}, "suite": {"pass_rate": ">= 0.0"}},
            }
            if traced:
                config["traces"] = {"receive": f"127.0.0.1:{receiver}", "settle_s": max(5.0, 3 * args.bsp_ms / 1000)}
            (folder / "ragjudge.yml").write_text(json.dumps(config), encoding="utf-8")
            run = run_gate(folder, folder / "ragjudge.yml")
            report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    finally:
        service.terminate()
        service.wait(timeout=10)
    from_trace = sum(c["metrics"].get("context_recall") == 1.0 for c in report["cases"])
    return {**run, "from_trace": from_trace}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark `ragjudge run` with and without traces.")
    sub = parser.add_subparsers(dest="command")
    service = sub.add_parser("serve")
    service.add_argument("--port", type=int, required=True)
    service.add_argument("--otlp", default="")
    service.add_argument("--endpoint-ms", type=float, default=50.0)
    service.add_argument("--bsp-ms", type=int, default=100)
    service.add_argument("--extra-spans", type=int, default=0)
    parser.add_argument("--cases", type=int, default=400, metavar="N")
    parser.add_argument("--endpoint-ms", type=float, default=50.0, metavar="E")
    parser.add_argument("--concurrency", type=int, default=16, metavar="C")
    parser.add_argument("--bsp-ms", type=int, default=100, metavar="MS", help="the exporter's schedule delay")
    parser.add_argument(
        "--extra-spans", type=int, default=0, metavar="K", help="spans a case adds beyond its three (memory at volume)"
    )
    args = parser.parse_args(argv)
    if args.command == "serve":
        serve(args.port, args.otlp or None, args.endpoint_ms, args.bsp_ms, args.extra_spans)
        return 0
    plain, traced = measure(args, traced=False), measure(args, traced=True)
    n = args.cases
    for name, m in (("without traces", plain), ("with traces", traced)):
        cpu = m["cpu_s"] * 1000 / n
        print(
            f"{name:15} wall {m['wall_s']:.2f} s, cpu {cpu:.2f} ms/case, rss {m['peak_rss_mb']:.0f} MB, "
            f"recall from the trace in {m['from_trace'] if name == 'with traces' else 0} of {n}"
        )
    print(f"spans sent: {n * (3 + args.extra_spans)} ({3 + args.extra_spans} a case)")
    print(
        f"wall overhead {100 * (traced['wall_s'] / plain['wall_s'] - 1):+.1f}%, "
        f"cpu {(traced['cpu_s'] - plain['cpu_s']) * 1000 / n:+.2f} ms/case"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
