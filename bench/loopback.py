"""The benchmark's loopback servers: a RAG service and an OpenAI-compatible judge, with fixed latencies.

Run as its own process by gate_bench.py, so that serving never counts in the measured process's CPU time:

    python bench/loopback.py --endpoint-ms 50 --judge-ms 100 [--judge-429-rate 0.1] [--seed 0]

It prints one JSON line, `{"rag": URL, "judge": BASE_URL, "stats": URL}`, then serves until killed.
`GET <stats>` returns the counters (and the arrival time of the first endpoint request, epoch seconds);
`POST <stats>` resets them. The judge builds each reply from the request's json_schema response format,
so it answers every judge kind ragjudge asks for (rubric, claims, a combined reply) with a valid reply.
A 429 is answered at once, without Retry-After: a rate limit that gives no hint.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PASSAGES = [
    {
        "id": f"p{i}",
        "title": f"Policy section {i}",
        "text": (
            f"Section {i}. Customers may return most items within 7 days of delivery for a full refund. "
            "The item must be unused and in its original packaging. Refunds are paid to the original "
            "payment method within 3 to 5 business days after the warehouse receives the return. "
            "Standard shipping takes 2 to 4 business days; express shipping arrives the next business day "
            "in most cities. Invoices can be requested from the order page within 30 days. "
        )
        * 2,
    }
    for i in range(1, 4)
]
ANSWER = (
    "You can return the item within 7 days of delivery for a full refund. "
    "The refund reaches your original payment method within 3 to 5 business days."
)


class Counters:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.first_request_at: float | None = None
        self.last_answer_at: float | None = None
        self.first_judge_at: float | None = None
        self.last_judge_at: float | None = None
        """Epoch seconds: the first endpoint request's arrival, the last endpoint answer, the first judge call's
        arrival, the last judge reply (a timeline of the run, to see where the wall time beyond the floor goes)."""
        self.rag_requests = 0
        self.judge_calls = 0
        self.judge_429 = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.in_flight = 0
        self.started_at = time.monotonic()
        self.in_flight_max: list[int] = []
        self.first_token_ms: list[float] = []
        """`/chat`: per streamed reply, ms from the request's arrival to its first token's write."""
        """Judge calls in flight, the most seen in each half second since the reset."""

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if k not in ("lock", "started_at", "in_flight")}


def instance(schema: dict[str, Any], defs: dict[str, Any], name: str = "") -> Any:
    """A valid value for a JSON schema (the subset pydantic generates), with believable content."""
    if "$ref" in schema:
        return instance(defs[schema["$ref"].split("/")[-1]], defs, name)
    if "anyOf" in schema:
        options = [s for s in schema["anyOf"] if s.get("type") != "null"]
        return instance(options[0], defs, name) if options else None
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {key: instance(sub, defs, key) for key, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [instance(schema.get("items", {}), defs, name)]
    if kind == "integer":
        low, high = schema.get("minimum", 1), schema.get("maximum", 5)
        return max(low, min(high, 4))
    if kind == "number":
        return 0.8
    if kind == "boolean":
        return True
    if name in ("evidence_id", "passage_id", "id"):
        return PASSAGES[0]["id"]
    if name == "claim":
        return ANSWER.split(". ")[0]
    return "Supported by the first passage; the answer states the policy accurately."


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real services and SDK clients use
    # Headers and body go out in two writes: with Nagle's algorithm on, the body waits for the client's
    # delayed ACK (40 ms on Linux). Real servers set TCP_NODELAY, and so does this one.
    disable_nagle_algorithm = True
    server: Servers

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _reply(self, status: int, body: Any) -> None:
        payload = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        if self.path == "/stats":
            with self.server.counters.lock:
                self._reply(200, self.server.counters.as_dict())
        else:
            self._reply(404, {"error": "not found"})

    def do_POST(self) -> None:
        arrived = time.time()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        counters = self.server.counters
        if self.path == "/stats":
            with counters.lock:
                counters.reset()
            self._reply(200, {})
        elif self.path == "/ask":
            with counters.lock:
                if counters.first_request_at is None:
                    counters.first_request_at = arrived
                counters.rag_requests += 1
            time.sleep(self.server.endpoint_s)
            # Each answer differs (it names the question), so no two cases share a judge prompt.
            question = str(json.loads(raw or b"{}").get("question", ""))
            answer = f"{ANSWER} (Your question: {question})"
            self._reply(200, {"answer": answer, "retrieved": PASSAGES, "confidence": "high"})
            with counters.lock:
                counters.last_answer_at = time.time()
        elif self.path == "/v1/chat/completions":
            self._judge(json.loads(raw))
        elif self.path == "/chat":
            self._chat(json.loads(raw), arrived)
        else:
            self._reply(404, {"error": "not found"})

    def _chat(self, body: dict[str, Any], arrived: float) -> None:
        """An OpenAI-compatible chat service: the first token after `first_token_s`, then `tokens` more, each
        `token_s` apart; streamed as chunks (chunked transfer encoding, keep-alive) or, without `stream`, one
        body once the last token would have been sent."""
        counters, cfg = self.server.counters, self.server
        with counters.lock:
            if counters.first_request_at is None:
                counters.first_request_at = arrived
            counters.rag_requests += 1
        messages = body.get("messages") or []
        last = str(messages[-1].get("content", "")) if messages else ""
        words = [f"w{i} " for i in range(cfg.tokens - 1)] + [f"(turn {len(messages) // 2 + 1}: {last})"]
        started = time.monotonic()
        if not body.get("stream"):
            time.sleep(cfg.first_token_s + cfg.token_s * (cfg.tokens - 1))
            self._reply(200, {"choices": [{"message": {"content": "".join(words)}}], "references": PASSAGES})
            with counters.lock:
                counters.last_answer_at = time.time()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def send(data: Any) -> None:
            frame = f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
            self.wfile.flush()

        head = {"object": "chat.completion.chunk", "references": PASSAGES}
        send({**head, "choices": [{"index": 0, "delta": {"role": "assistant"}}]})
        for i, word in enumerate(words):
            # Each token at its planned time since the request came, so sleeping's overshoot does not add up.
            wait = started + cfg.first_token_s + i * cfg.token_s - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            if i == 0:
                with counters.lock:
                    counters.first_token_ms.append(round((time.monotonic() - started) * 1000, 2))
            send({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": word}}]})
        send({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        send("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        with counters.lock:
            counters.last_answer_at = time.time()

    def _judge(self, body: dict[str, Any]) -> None:
        counters = self.server.counters
        with counters.lock:
            limited = self.server.rng.random() < self.server.rate_429
            if limited:
                counters.judge_429 += 1
        if limited:
            error = {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}
            self._reply(429, {"error": {**error, "param": None}})
            return
        with counters.lock:
            if counters.first_judge_at is None:
                counters.first_judge_at = time.time()
            counters.in_flight += 1
            bucket = int((time.monotonic() - counters.started_at) * 2)
            peaks = counters.in_flight_max
            peaks.extend([0] * (bucket + 1 - len(peaks)))
            peaks[bucket] = max(peaks[bucket], counters.in_flight)
        time.sleep(self.server.judge_s)
        with counters.lock:
            counters.in_flight -= 1
        fmt = body.get("response_format") or {}
        schema = fmt.get("json_schema", {}).get("schema", {}) if fmt.get("type") == "json_schema" else {}
        content = json.dumps(instance(schema, schema.get("$defs", {}))) if schema else '{"claims": []}'
        prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4
        completion = len(content) // 4
        with counters.lock:
            counters.judge_calls += 1
            counters.prompt_tokens += prompt
            counters.completion_tokens += completion
        self._reply(
            200,
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "bench"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content, "refusal": None},
                        "logprobs": None,
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            },
        )
        with counters.lock:
            counters.last_judge_at = time.time()


class Servers(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def __init__(
        self,
        endpoint_s: float,
        judge_s: float,
        rate_429: float,
        seed: int,
        chat: tuple[float, int, float] = (0.2, 20, 0.01),
    ) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.first_token_s, self.tokens, self.token_s = chat
        self.endpoint_s = endpoint_s
        self.judge_s = judge_s
        self.rate_429 = rate_429
        self.rng = random.Random(seed)
        self.counters = Counters()


def launch(
    endpoint_ms: float, judge_ms: float, rate_429: float = 0.0, chat: tuple[float, int, float] = (200.0, 20, 10.0)
) -> tuple[subprocess.Popen[str], dict[str, str]]:
    """These servers in a process of their own (so serving costs the measured process nothing), and their URLs.

    `chat`: the `/chat` service's ms to the first token, its number of tokens, and the ms between them."""
    command = [sys.executable, __file__, "--endpoint-ms", str(endpoint_ms), "--judge-ms", str(judge_ms)]
    command += ["--first-token-ms", str(chat[0]), "--tokens", str(chat[1]), "--token-ms", str(chat[2])]
    server = subprocess.Popen([*command, "--judge-429-rate", str(rate_429)], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    urls: dict[str, str] = json.loads(server.stdout.readline())
    return server, urls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint-ms", type=float, default=50.0)
    parser.add_argument("--judge-ms", type=float, default=100.0)
    parser.add_argument("--judge-429-rate", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--first-token-ms", type=float, default=200.0)
    parser.add_argument("--tokens", type=int, default=20)
    parser.add_argument("--token-ms", type=float, default=10.0)
    args = parser.parse_args(argv)
    chat = (args.first_token_ms / 1000, args.tokens, args.token_ms / 1000)
    server = Servers(args.endpoint_ms / 1000, args.judge_ms / 1000, args.judge_429_rate, args.seed, chat)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    urls = {"rag": f"{url}/ask", "chat": f"{url}/chat", "judge": f"{url}/v1", "stats": f"{url}/stats"}
    print(json.dumps(urls), flush=True)
    server.serve_forever(poll_interval=0.2)  # until gate_bench.py terminates this process
    return 0


if __name__ == "__main__":
    sys.exit(main())
