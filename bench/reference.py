"""The least a Python client of the benchmark's stand-ins takes: the reference for gate_bench.py's figures.

    python bench/reference.py --cases 400 --endpoint-ms 50 --judge-ms 100 --concurrency 16 [--warm]

gate_bench.py's floors assume an endpoint that answers in exactly E ms and a judge in exactly J ms, with
nothing else costing time. The loopback servers, the HTTP stacks and the openai SDK's import do cost time,
and none of that is ragjudge's. This script measures what a bare pipeline pays against the same servers,
in a fresh interpreter as `ragjudge run` is: the openai SDK imported on a thread of its own, the endpoint
called from a pool of C threads with `http.client`, each answer handed to a pool of C threads that make one
chat completion with the SDK (a prompt of the gate's size, a JSON-schema reply). No config, no checks, no
report. `--warm` leaves the judge out (a rerun on a filled cache makes no judge call).

Printed: the wall of the bare pipeline, of the interpreter's start alone (`python -c pass`), the SDK import
measured inside the pipeline's process, and the wall over gate_bench.py's pipelined floor.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

from loopback import launch

# About the gate's combined prompt: 1,700 tokens of instructions, question, answer and passages.
PROMPT = "Judge the answer against the passages. " * 170
SCHEMA = {
    "type": "object",
    "properties": {
        "scores": {"type": "object", "properties": {"relevance": {"type": "integer"}}, "required": ["relevance"]},
        "claims": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["scores", "claims"],
}


def child(urls: dict[str, str], cases: int, concurrency: int, warm: bool) -> dict[str, Any]:
    """The bare pipeline, run in the measured process."""
    import http.client

    ready = threading.Event()
    holder: dict[str, Any] = {}

    def import_sdk() -> None:
        started = time.perf_counter()
        import openai

        holder["client"] = openai.OpenAI(base_url=urls["judge"], api_key="sk-reference", max_retries=0)
        holder["import_s"] = time.perf_counter() - started
        ready.set()

    if not warm:
        threading.Thread(target=import_sdk).start()
    rag = urlsplit(urls["rag"])
    local = threading.local()

    def ask(i: int) -> dict[str, Any]:
        connection = getattr(local, "connection", None)
        if connection is None:
            connection = local.connection = http.client.HTTPConnection(rag.hostname or "", rag.port)
        connection.request("POST", rag.path, json.dumps({"question": f"q{i}"}), {"Content-Type": "application/json"})
        reply: dict[str, Any] = json.loads(connection.getresponse().read())
        return reply

    def judge(reply: dict[str, Any]) -> str:
        ready.wait()
        completion = holder["client"].chat.completions.create(
            model="reference",
            messages=[{"role": "system", "content": PROMPT}, {"role": "user", "content": reply["answer"]}],
            response_format={"type": "json_schema", "json_schema": {"name": "verdict", "schema": SCHEMA}},
        )
        return str(completion.choices[0].message.content)

    judges = ThreadPoolExecutor(concurrency)
    with ThreadPoolExecutor(concurrency) as endpoints:
        answers = [endpoints.submit(ask, i) for i in range(cases)]
        verdicts = [judges.submit(judge, a.result()) for a in answers] if not warm else []
    judged = [json.loads(v.result()) for v in verdicts]
    judges.shutdown()
    return {"import_s": holder.get("import_s"), "judged": len(judged)}


def timed(command: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return time.perf_counter() - started, done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, required=True, metavar="N")
    parser.add_argument("--endpoint-ms", type=float, default=50.0, metavar="E")
    parser.add_argument("--judge-ms", type=float, default=100.0, metavar="J")
    parser.add_argument("--concurrency", type=int, default=16, metavar="C")
    parser.add_argument("--warm", action="store_true", help="no judge calls, as on a filled judge cache")
    parser.add_argument("--child", metavar="URLS", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child), args.cases, args.concurrency, args.warm)))
        return 0

    server, served = launch(args.endpoint_ms, args.judge_ms)
    try:
        urls = json.dumps(served)
        start_s, _ = timed([sys.executable, "-c", "pass"])
        command = [sys.executable, __file__, "--cases", str(args.cases), "--concurrency", str(args.concurrency)]
        wall, out = timed([*command, *(["--warm"] if args.warm else []), "--child", urls])
    finally:
        server.terminate()
        server.wait(timeout=10)
    inside = json.loads(out)
    endpoint_floor = args.cases * args.endpoint_ms / 1000 / args.concurrency
    judge_floor = 0.0 if args.warm else args.cases * args.judge_ms / 1000 / args.concurrency
    pipelined = max(endpoint_floor, judge_floor)
    figures = {
        "cases": args.cases,
        "bare_wall_s": round(wall, 3),
        "pipelined_floor_s": round(pipelined, 3),
        "bare_over_pipelined": round(wall / pipelined, 3),
        "python_start_s": round(start_s, 3),
        "sdk_import_s": round(inside["import_s"], 3) if inside["import_s"] is not None else None,
        "judged": inside["judged"],
    }
    width = max(len(k) for k in figures)
    for key, value in figures.items():
        print(f"{key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
