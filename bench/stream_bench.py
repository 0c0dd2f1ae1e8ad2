"""Benchmark the stream reader: its parse cost in process, and streamed calls end to end over loopback HTTP.

    python bench/stream_bench.py [--repeats 5] [--sizes 1,4.5,10] [--events 1000000] [--protocol ai-sdk] \
        [--before-repeats 3] [--no-before] [--calls 300] [--rounds 3] [--parts 40] [--part-ms 1] \
        [--big-mb 10] [--only inprocess|e2e|big|turns] [--src DIR] [--json]

In process, `ragjudge.endpoint.stream` is fed bytes in 64 KiB chunks (what urllib3's `read1(65536)` gives the
client) and its events are handed to `Assembly` as the client hands them, stopping at a declared end:
(a) one SSE event whose data is a JSON text delta of 1, 4.5 and 10 MB; (b) `--events` tiny text deltas of
1-3 characters. Three readers: the declared protocol (`protocols.BUILTIN[--protocol]`), the generic one (no
protocol, `answer_delta` mapped), and the reader before the rewrite (`git show 55bd195:src/ragjudge/endpoint/
stream.py`, written to a temporary folder at run time, read with `answer_delta` mapped: that one knows no
protocols). Printed per reader and workload, in CPU seconds of this process (the machine is shared: wall time
would count another job's turns; the whole reading's wall time is printed beside): the parsers' share
(`SseParser.feed`/`close`, bytes to events) and the whole reading (parsing, `Assembly.add` per event,
`check_end`, `reply()`), medians and [min-max] of the repeats; events per CPU second for (b); the 10 MB/1 MB
ratio. The reader before the rewrite is quadratic in an event's size (10 MB takes one to two minutes), so it has
its own, smaller `--before-repeats`.

End to end, `EndpointClient` (as a run builds it from an `EndpointConfig`) calls a loopback service run by this
script in a process of its own (`--serve`), so serving costs the measured process nothing:
(a) a stream of one `--big-mb` MB text delta: the trace's `latency_ms` against the call's wall clock and the
service's own time from the request's arrival to its last write; (b) `--calls` calls in a row, in `--rounds`
alternating rounds, of an AI SDK UI message stream of `--parts` parts (`start`, `text-start`, text deltas,
`text-end`, `finish`, then `[DONE]`), one part every `--part-ms` ms, against the same answer as one JSON body
sent when the last part would have been, and against that body on a new connection each call: CPU
(`time.process_time`, the whole client process) per call, the connections the service saw, and the reader's
own CPU for the same stream in process. A fixed pure-Python loop is timed at the start and the end (the
machine's speed at that hour), and the issue's bounds are checked against the medians. `--src DIR` runs another
copy of the package (e.g. an older commit's `src/` from `git archive`). Nothing in the test suite asserts a time.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qs, urlparse

ROOT = Path(__file__).resolve().parents[1]
CHUNK = 65536
"""What urllib3's `read1(65536)` hands the client at most, per read."""
BEFORE_COMMIT = "55bd195"
"""The last commit with the stream reader before its rewrite."""
SHAPES: dict[str, tuple[dict[str, Any], list[Any], list[Any], str]] = {
    # protocol: (the text event's JSON with TEXT for its text, events before, events after, answer_delta path)
    "ai-sdk": (
        {"type": "text-delta", "id": "t0", "delta": "TEXT"},
        [{"type": "start", "messageId": "m0"}, {"type": "start-step"}, {"type": "text-start", "id": "t0"}],
        [{"type": "text-end", "id": "t0"}, {"type": "finish-step"}, {"type": "finish"}, "[DONE]"],
        "delta",
    ),
    "openai-chat": (
        {"id": "c0", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "TEXT"}}]},
        [{"id": "c0", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant"}}]}],
        [
            {
                "id": "c0",
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            },
            "[DONE]",
        ],
        "choices.0.delta.content",
    ),
}
TINY = ("a", "bc", "def")
"""The tiny events' texts, in turn (1-3 characters)."""


# --- the payloads ---------------------------------------------------------------------------------------------


def frame(data: Any) -> bytes:
    return b"data: " + (data if isinstance(data, str) else json.dumps(data)).encode() + b"\n\n"


def text_frame(protocol: str, text: str) -> bytes:
    template = json.dumps(SHAPES[protocol][0])
    return b"data: " + template.replace('"TEXT"', json.dumps(text)).encode() + b"\n\n"


def big_text(size_mb: float, sentences: bool = True) -> str:
    """About `size_mb` MB of text in pieces of 64 characters: sentences (each ends in ". "), or words of one
    sentence that never ends (what the built-in refusal phrases are then searched in: see bench/README.md)."""
    piece = "x" * 62 + ". " if sentences else "x" * 63 + " "
    return piece * int(size_mb * 1_000_000 / 64)


def stream_of(protocol: str, texts: Iterator[str] | list[str]) -> bytes:
    _, before, after, _ = SHAPES[protocol]
    parts = [frame(e) for e in before] + [text_frame(protocol, t) for t in texts] + [frame(e) for e in after]
    return b"".join(parts)


def chunked(payload: bytes, size: int = CHUNK) -> list[bytes]:
    return [payload[i : i + size] for i in range(0, len(payload), size)]


# --- in process ---------------------------------------------------------------------------------------------


def load_before() -> ModuleType:
    """The stream module before the rewrite, from git, as a module of its own (nothing is written in the tree)."""
    source = subprocess.run(
        ["git", "show", f"{BEFORE_COMMIT}:src/ragjudge/endpoint/stream.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    with tempfile.TemporaryDirectory(prefix="stream-bench-") as folder:
        path = Path(folder) / "stream_before.py"
        path.write_text(source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location("stream_before", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["stream_before"] = module  # dataclasses look their module up
        spec.loader.exec_module(module)  # compiled now: the file is not needed once loaded
    return module


def readers(protocol: str, before: ModuleType | None) -> dict[str, Callable[[], tuple[Any, Any]]]:
    """Each reader's (parser, assembly) factory, by the name the table gives it."""
    from ragjudge.config.endpoint_config import ResponseMapping
    from ragjudge.endpoint import events, stream
    from ragjudge.endpoint.protocols import BUILTIN

    delta = SHAPES[protocol][3]
    found: dict[str, Callable[[], tuple[Any, Any]]] = {
        f"after: {protocol}": lambda: (
            events.SseParser(),
            stream.Assembly(ResponseMapping(), protocol=BUILTIN[protocol]),
        ),
        "after: generic": lambda: (events.SseParser(), stream.Assembly(ResponseMapping(answer_delta=delta))),
    }
    if before is not None:
        found["before"] = lambda: (before.SseParser(), before.Assembly(ResponseMapping(answer_delta=delta)))
    return found


def read_once(make: Callable[[], tuple[Any, Any]], chunks: list[bytes]) -> tuple[float, float, float, int]:
    """One whole reading as the client does it: the parsers' CPU seconds (bytes to events), the whole reading's
    CPU and wall seconds (with `Assembly.add` per event, `check_end` and `reply()`), and the answer's length.

    CPU time, because the machine is shared: wall time counts the moments another job had the core."""
    parser, assembly = make()
    parse = 0.0
    stopped = False
    clock = time.process_time
    started, started_wall = clock(), time.perf_counter()
    for chunk in chunks:
        t0 = clock()
        parsed = parser.feed(chunk)
        parse += clock() - t0
        for event in parsed:
            if assembly.add(event):
                stopped = True
                break
        if stopped:
            break
    if not stopped:
        t0 = clock()
        parsed = parser.close()
        parse += clock() - t0
        for event in parsed:
            if assembly.add(event):
                break
        assembly.check_end()
    reply = assembly.reply()
    whole, wall = clock() - started, time.perf_counter() - started_wall
    return parse, whole, wall, len(reply.get("answer") or "")


def spread(values: list[float], digits: int = 3) -> dict[str, Any]:
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
        "n": len(values),
    }


def measure_inprocess(args: argparse.Namespace, before: ModuleType | None) -> list[dict[str, Any]]:
    workloads: list[tuple[str, float | None, bytes, int]] = []
    for size in args.sizes:
        text = big_text(size)
        workloads.append((f"one {size:g} MB event", size, stream_of(args.protocol, [text]), len(text)))
    tiny = [TINY[i % 3] for i in range(args.events)]
    workloads.append((f"{args.events:,} tiny events", None, stream_of(args.protocol, tiny), sum(len(t) for t in tiny)))
    rows: list[dict[str, Any]] = []
    for name, size, payload, chars in workloads:
        events = payload.count(b"\n\n")  # the stream's events, text deltas and the rest
        chunks = chunked(payload)
        makers = readers(args.protocol, before)
        times: dict[str, tuple[list[float], list[float], list[float]]] = {r: ([], [], []) for r in makers}
        most = max(args.repeats, args.before_repeats if before is not None else 0)
        for i in range(most):
            for reader, make in makers.items():  # the readers in turn, so the machine's drift falls on each
                if i >= (args.before_repeats if reader == "before" else args.repeats):
                    continue
                gc.collect()
                parse, whole, wall, got = read_once(make, chunks)
                if got != chars:
                    raise SystemExit(f"{reader}, {name}: the answer has {got} characters, not {chars}")
                times[reader][0].append(parse)
                times[reader][1].append(whole)
                times[reader][2].append(wall)
                if not args.json:
                    print(f"  {name}, {reader}: parse {parse:.3f} s, whole {whole:.3f} s CPU", file=sys.stderr)
        for reader, (parses, wholes, walls) in times.items():
            row = {
                "workload": name,
                "size_mb": size,
                "bytes": len(payload),
                "events": events,
                "reader": reader,
                "parse_s": spread(parses, 4),
                "whole_s": spread(wholes, 4),
                "whole_wall_s": spread(walls, 4),
            }
            if size is None:
                row["events_per_s"] = round(events / statistics.median(wholes))
                row["parse_events_per_s"] = round(events / statistics.median(parses))
            rows.append(row)
        del chunks, payload
    return rows


def ratios(rows: list[dict[str, Any]], low: float, high: float) -> dict[str, dict[str, float]]:
    """Per reader: the high size's median CPU over the low one's, parsers alone and whole."""
    out: dict[str, dict[str, float]] = {}
    by = {(r["reader"], r["size_mb"]): r for r in rows}
    for reader in {r["reader"] for r in rows}:
        a, b = by.get((reader, low)), by.get((reader, high))
        if a and b:
            out[reader] = {key: round(b[key]["median"] / a[key]["median"], 2) for key in ("parse_s", "whole_s")}
    return out


# --- the loopback service (`--serve`, a process of its own) ----------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real services use
    disable_nagle_algorithm = True  # headers and body go out in separate writes (see bench/README.md)
    server: Service

    def log_message(self, format: str, *args: Any) -> None:
        return

    def setup(self) -> None:
        super().setup()
        with self.server.lock:
            self.server.counters["connections"] += 1

    def _json(self, status: int, body: Any, close: bool = False) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        if close:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        with self.server.lock:
            self._json(200, self.server.counters)

    def do_POST(self) -> None:
        arrived = time.monotonic()
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        service = self.server
        if url.path == "/stats":
            with service.lock:
                service.reset()
            self._json(200, {})
            return
        try:
            if url.path == "/big":
                payload = service.big(float(query.get("mb", "10")), query.get("text") != "one-sentence")
                self._begin_stream()
                self._chunk(payload)
            elif url.path == "/parts":
                self._begin_stream()
                for i, part in enumerate(service.parts):
                    self._wait(arrived + i * service.part_s)
                    self._chunk(part)
            elif url.path == "/body":
                self._wait(arrived + (len(service.parts) - 1) * service.part_s)
                if query.get("close"):
                    self.close_connection = True  # and says so: `Connection: close`
                self._json(200, {"answer": service.answer}, close=bool(query.get("close")))
            else:
                self._json(404, {"error": "not found"})
                return
            if url.path != "/body":
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            # The client read to the stream's declared end (`finish`, `[DONE]`) and closed the connection
            # without reading the rest (`[DONE]`, the chunked body's last chunk).
            self.close_connection = True
            with service.lock:
                service.counters["closed_by_client_early"] += 1
        with service.lock:
            service.counters["requests"] += 1
            service.counters["served_ms"].append(round((time.monotonic() - arrived) * 1000, 2))

    def _begin_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("x-vercel-ai-ui-message-stream", "v1")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    @staticmethod
    def _wait(until: float) -> None:
        wait = until - time.monotonic()
        if wait > 0:
            time.sleep(wait)


class Service(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, parts: int, part_ms: float) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.lock = threading.Lock()
        self.part_s = part_ms / 1000
        self.answer, self.parts = ai_sdk_parts(parts)
        self._big: dict[tuple[float, bool], bytes] = {}
        self.reset()

    def reset(self) -> None:
        self.counters: dict[str, Any] = {
            "connections": 0,
            "requests": 0,
            "closed_by_client_early": 0,
            "served_ms": [],
        }
        """Connections opened, streams and bodies served, replies whose connection the client closed before their
        last bytes, and each reply's ms from its arrival to its last write."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client's close between requests is no news
            super().handle_error(request, client_address)

    def big(self, size_mb: float, sentences: bool) -> bytes:
        with self.lock:
            if (size_mb, sentences) not in self._big:
                self._big[size_mb, sentences] = stream_of("ai-sdk", [big_text(size_mb, sentences)])
            return self._big[size_mb, sentences]


def ai_sdk_parts(parts: int) -> tuple[str, list[bytes]]:
    """An answer, and the AI SDK UI message stream parts that send it (`parts` in all, then `[DONE]`)."""
    count = max(1, parts - 6)
    sentence = (
        "You can return the item within 7 days of delivery for a full refund, unused and in its original "
        "packaging; the refund reaches your original payment method within 3 to 5 business days. "
    )
    words = (sentence * (1 + count // 30)).split(" ")
    per = max(1, len(words) // count)
    texts = [" ".join(words[i * per : (i + 1) * per]) + " " for i in range(count)]
    _, before, after, _ = SHAPES["ai-sdk"]
    frames = [frame(e) for e in before] + [text_frame("ai-sdk", t) for t in texts] + [frame(e) for e in after]
    return "".join(texts), frames


def serve(parts: int, part_ms: float) -> int:
    service = Service(parts, part_ms)
    print(json.dumps({"url": f"http://127.0.0.1:{service.server_address[1]}"}), flush=True)
    service.serve_forever(poll_interval=0.2)  # until the benchmark terminates this process
    return 0


def launch(args: argparse.Namespace) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, __file__, "--serve", "--parts", str(args.parts), "--part-ms", str(args.part_ms)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    url: str = json.loads(server.stdout.readline())["url"]
    return server, url


def stats(url: str, reset: bool = False) -> dict[str, Any]:
    request = urllib.request.Request(f"{url}/stats", data=b"{}" if reset else None, method="POST" if reset else "GET")
    with urllib.request.urlopen(request, timeout=10) as reply:
        data: dict[str, Any] = json.loads(reply.read())
    return data


# --- end to end -------------------------------------------------------------------------------------------------


def client_for(url: str, generic: bool) -> Any:
    """`EndpointClient` as a run builds it: the AI SDK protocol declared, or none (`answer_delta: delta`). None
    when the package measured (`--src`) knows no `endpoint.protocol`."""
    from ragjudge.config.endpoint_config import EndpointConfig
    from ragjudge.endpoint.client import EndpointClient

    config: dict[str, Any] = {"timeout_s": 300, "retries": 0, "max_response_bytes": 64_000_000}
    config.update({"response": {"answer_delta": "delta"}} if generic else {"protocol": "ai-sdk"})
    try:
        return EndpointClient(EndpointConfig(**config), url)
    except ValueError:  # pydantic's ValidationError: an older package
        return None


def case() -> Any:
    from ragjudge.cases.case import Case

    return Case(
        id="c-1",
        question="Can I return the item?",
        expected=None,
        golden_context_ids=(),
        category=None,
        should_answer=True,
        must_mention=(),
        must_not_mention=(),
        source=None,
        difficulty=None,
        tags=(),
        origin="bench",
    )


def call(client: Any, asked: Any, answer_chars: int) -> Any:
    result = client.call(asked)
    if result.error is not None or result.trace is None:
        raise SystemExit(f"the call failed: {result.error}")
    if len(result.trace.answer or "") != answer_chars:
        raise SystemExit(f"the answer has {len(result.trace.answer or '')} characters, not {answer_chars}")
    return result.trace


def measure_big(args: argparse.Namespace, url: str) -> list[dict[str, Any]]:
    """A stream of one big text delta: latency_ms (taken at the bytes) against the wall clock of the call."""
    rows = []
    for protocol, text in (("ai-sdk", "sentences"), ("ai-sdk", "one-sentence"), ("generic", "sentences")):
        client = client_for(f"{url}/big?mb={args.big_mb:g}&text={text}", generic=protocol == "generic")
        if client is None:
            continue
        chars = len(big_text(args.big_mb, text == "sentences"))
        asked = case()
        call(client, asked, chars)  # the service builds its payload, the client opens its connection
        latency, ttft, wall, cpu, served = [], [], [], [], []
        for _ in range(args.repeats):
            stats(url, reset=True)
            gc.collect()
            c0, t0 = time.process_time(), time.perf_counter()
            trace = call(client, asked, chars)
            wall.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
            latency.append(trace.latency_ms)
            ttft.append(trace.ttft_ms)
            served.append(stats(url)["served_ms"][0])
            if not args.json:
                print(f"  {args.big_mb:g} MB, {protocol}, {text}: wall {wall[-1]:.0f} ms", file=sys.stderr)
        rows.append(
            {
                "mode": f"one {args.big_mb:g} MB event ({text}), {protocol}",
                "latency_ms": spread(latency, 1),
                "ttft_ms": spread(ttft, 1),
                "wall_ms": spread(wall, 1),
                "wall_minus_latency_ms": spread([w - lat for w, lat in zip(wall, latency, strict=True)], 1),
                "service_ms": spread(served, 1),
                "latency_minus_service_ms": spread([lat - s for lat, s in zip(latency, served, strict=True)], 1),
                "cpu_ms": spread(cpu, 1),
            }
        )
    return rows


def reading_ms(frames: list[bytes], generic: bool, runs: int = 1000) -> float:
    """In process: the reader's own time for one of these streams, each part its own chunk (median ms)."""
    makers = readers("ai-sdk", None)
    make = makers["after: generic" if generic else "after: ai-sdk"]
    times = [read_once(make, frames)[1] for _ in range(runs)]
    return round(statistics.median(times) * 1000, 3)


def measure_turns(args: argparse.Namespace, url: str) -> list[dict[str, Any]]:
    """CPU per call: a streamed reply of `--parts` AI SDK parts against the same answer as one JSON body."""
    answer, frames = ai_sdk_parts(args.parts)
    built = {
        "streamed, ai-sdk": client_for(f"{url}/parts", generic=False),
        "streamed, generic": client_for(f"{url}/parts", generic=True),
        "one body": client_for(f"{url}/body", generic=False) or client_for(f"{url}/body", generic=True),
        "one body, a new connection each call": client_for(f"{url}/body?close=1", generic=True),
    }
    modes = {mode: client for mode, client in built.items() if client is not None}
    asked = case()
    for client in modes.values():
        for _ in range(20):  # warm: connections open, first-call costs paid
            call(client, asked, len(answer))
    cpu: dict[str, list[float]] = {m: [] for m in modes}
    wall: dict[str, list[float]] = {m: [] for m in modes}
    connections: dict[str, list[int]] = {m: [] for m in modes}
    early: dict[str, list[int]] = {m: [] for m in modes}
    for _ in range(args.rounds):
        for mode, client in modes.items():  # the modes in turn, so the machine's drift falls on each
            stats(url, reset=True)
            gc.collect()
            c0, t0 = time.process_time(), time.perf_counter()
            for _ in range(args.calls):
                call(client, asked, len(answer))
            wall[mode].append((time.perf_counter() - t0) * 1000 / args.calls)
            cpu[mode].append((time.process_time() - c0) * 1000 / args.calls)
            served = stats(url)
            connections[mode].append(served["connections"])
            early[mode].append(served["closed_by_client_early"])
            if not args.json:
                print(f"  {mode}: {cpu[mode][-1]:.3f} ms CPU per call", file=sys.stderr)
    rows = []
    for mode in modes:
        row = {
            "mode": mode,
            "calls": args.calls * args.rounds,
            "cpu_ms_per_call": spread(cpu[mode]),
            "wall_ms_per_call": spread(wall[mode], 2),
            "connections_per_round": connections[mode],
            "closed_early_per_round": early[mode],
            "reading_ms": None,
        }
        if mode.startswith("streamed"):
            row["reading_ms"] = reading_ms(frames, generic=mode.endswith("generic"))
        rows.append(row)
    return rows


# --- the report -------------------------------------------------------------------------------------------------


def calibration() -> dict[str, float]:
    """The machine's speed at this hour: a fixed pure-Python loop (10 million additions), wall and CPU seconds."""
    c0, t0 = time.process_time(), time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    return {"wall_s": round(time.perf_counter() - t0, 3), "cpu_s": round(time.process_time() - c0, 3)}


def bounds(out: dict[str, Any], args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The issue's bounds, against the medians measured: the whole reading of the largest event under 1 s and at
    most 12 times the smallest's (for sizes 1 and 10 MB), a streamed turn's CPU at most twice a one-body turn's."""
    found: dict[str, dict[str, Any]] = {}
    high = max(args.sizes)
    for row in out.get("inprocess", []):
        if row["size_mb"] == high and row["reader"] != "before":
            value = row["whole_s"]["median"]
            found[f"{high:g} MB event under 1 s, {row['reader']}"] = {"value": value, "bound": 1.0, "held": value < 1}
    for reader, ratio in out.get("size_ratio", {}).get("by_reader", {}).items():
        if reader != "before":
            value = ratio["whole_s"]
            name = f"{high:g} MB at most 12x {min(args.sizes):g} MB, {reader}"
            found[name] = {"value": value, "bound": 12, "held": value <= 12}
    for mode, value in out.get("cpu_streamed_over_one_body", {}).items():
        found[f"CPU {mode} at most 2x one body"] = {"value": value, "bound": 2, "held": value <= 2}
    return found


def shown(figure: dict[str, Any]) -> str:
    if figure["n"] == 1 or figure["min"] == figure["max"]:
        return f"{figure['median']}"
    return f"{figure['median']} [{figure['min']}-{figure['max']}]"


def table(rows: list[dict[str, Any]], columns: dict[str, Callable[[dict[str, Any]], Any]]) -> None:
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(get(row)) for get in columns.values()) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", type=lambda s: [float(x) for x in s.split(",")], default=[1.0, 4.5, 10.0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--protocol", choices=sorted(SHAPES), default="ai-sdk")
    parser.add_argument("--before-repeats", type=int, default=3)
    parser.add_argument("--no-before", action="store_true", help="leave out the reader before the rewrite")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--parts", type=int, default=40)
    parser.add_argument("--part-ms", type=float, default=1.0)
    parser.add_argument("--big-mb", type=float, default=10.0)
    parser.add_argument("--only", choices=("inprocess", "e2e", "big", "turns"), help="one part (e2e: big and turns)")
    parser.add_argument("--src", type=Path, help="the package's src/ to measure (default: this checkout's)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return serve(args.parts, args.part_ms)
    sys.path.insert(0, str(args.src.resolve() if args.src else ROOT / "src"))
    out: dict[str, Any] = {"calibration_start": calibration()}
    if args.only in (None, "inprocess"):
        before = None if args.no_before else load_before()
        rows = measure_inprocess(args, before)
        low, high = min(args.sizes), max(args.sizes)
        out["inprocess"] = rows
        out["size_ratio"] = {"low_mb": low, "high_mb": high, "by_reader": ratios(rows, low, high)}
    if args.only != "inprocess":
        server, url = launch(args)
        try:
            if args.only != "turns":
                out["big"] = measure_big(args, url)
            if args.only != "big":
                out["turns"] = measure_turns(args, url)
        finally:
            server.terminate()
            server.wait(timeout=10)
    if "turns" in out:
        by = {r["mode"]: r["cpu_ms_per_call"]["median"] for r in out["turns"]}
        out["cpu_streamed_over_one_body"] = {
            mode: round(by[mode] / by["one body"], 2) for mode in by if mode.startswith("streamed")
        }
        out["cpu_streamed_over_one_body_new_connection"] = {
            mode: round(by[mode] / by["one body, a new connection each call"], 2)
            for mode in by
            if mode.startswith("streamed")
        }
    out["calibration_end"] = calibration()
    out["bounds"] = bounds(out, args)
    if args.json:
        print(json.dumps(out))
        return 0
    if "inprocess" in out:
        table(
            out["inprocess"],
            {
                "workload": lambda r: r["workload"],
                "reader": lambda r: r["reader"],
                "parsers CPU s": lambda r: shown(r["parse_s"]),
                "whole reading CPU s": lambda r: shown(r["whole_s"]),
                "whole reading wall s": lambda r: shown(r["whole_wall_s"]),
                "events/CPU s": lambda r: f"{r['events_per_s']:,}" if "events_per_s" in r else "-",
                "repeats": lambda r: r["whole_s"]["n"],
            },
        )
        print(json.dumps({"size_ratio": out["size_ratio"]}))
    if "big" in out:
        table(
            out["big"],
            {
                "mode": lambda r: r["mode"],
                "latency_ms": lambda r: shown(r["latency_ms"]),
                "ttft_ms": lambda r: shown(r["ttft_ms"]),
                "wall ms": lambda r: shown(r["wall_ms"]),
                "wall - latency ms": lambda r: shown(r["wall_minus_latency_ms"]),
                "service ms": lambda r: shown(r["service_ms"]),
                "latency - service ms": lambda r: shown(r["latency_minus_service_ms"]),
                "CPU ms": lambda r: shown(r["cpu_ms"]),
            },
        )
    if "turns" in out:
        table(
            out["turns"],
            {
                "mode": lambda r: r["mode"],
                "calls": lambda r: r["calls"],
                "CPU ms/call": lambda r: shown(r["cpu_ms_per_call"]),
                "wall ms/call": lambda r: shown(r["wall_ms_per_call"]),
                "connections per round": lambda r: r["connections_per_round"],
                "closed early per round": lambda r: r["closed_early_per_round"],
                "in-process reading CPU ms": lambda r: r["reading_ms"] if r["reading_ms"] is not None else "-",
            },
        )
        ratios_out = {k: v for k, v in out.items() if k.startswith("cpu_streamed")}
        print(json.dumps(ratios_out))
    print(json.dumps({k: out[k] for k in ("calibration_start", "calibration_end", "bounds")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
