"""The judge-noise benchmark's loopback servers: a RAG service whose answers are good or worse by design, and an
OpenAI-compatible judge that is wrong on a set share of its verdicts.

    python bench/noisy_loopback.py [--flip 0.1]

prints one JSON line `{"base": URL}` and serves until killed:
- `POST {base}/svc/<kind>/<run>/<bad>/ask` `{"question": "... (#17)"}`: the answer to case 17, from passages that
  say refunds take 6 days. `kind` is `same` (each case's answer is the same text on every run, as a deterministic
  pipeline gives) or `reword` (the answer's words change with `run`); case numbers in `bad` (comma-separated, `-`
  for none) answer "36 days" instead: a worse answer.
- `POST {base}/w/<world>/v1/chat/completions`: the judge. A rubric call passes a good answer and fails a worse one
  (every rubric score 5, or 1); a pairwise call finds the worse answer worse and two good ones a tie. Each verdict is
  wrong with probability `--flip`, decided by a hash of the world, the messages and the seed: the same request is
  judged the same way (as a seeded judge at temperature 0 is), another sample, prompt or world independently.
  A wrong pairwise verdict is one of the two other winners, at random.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import threading
import time
from http.server import ThreadingHTTPServer
from typing import Any

import loopback  # the same folder's module (bench/ is on the path when run from it)
from loopback import PASSAGES, instance

PHRASES = [
    "Your refund reaches you",
    "The money is back on your card",
    "Expect the refund",
    "Refunds are paid",
    "You get your money back",
    "The refund lands",
]
WORSE = "36 days"
_CASE = re.compile(r"\(#(\d+)\)")
_SVC = re.compile(r"^/svc/(same|reword)/([\w-]+)/([\d,-]+)/ask$")
_JUDGE = re.compile(r"^/w/([\w-]+)/v1/chat/completions$")


def answer(kind: str, run: str, bad: set[int], case: int) -> str:
    days = WORSE if case in bad else "6 days"
    if kind == "same":
        return f"For your order (case {case}), the refund reaches your original payment method within {days}."
    phrase = PHRASES[int(hashlib.sha256(f"{run}:{case}".encode()).hexdigest()[:6], 16) % len(PHRASES)]
    return f"{phrase} within {days} (reply {run}-{case})."


def draw(*parts: Any) -> float:
    """A number in [0, 1) fixed by the parts."""
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return int(digest[:12], 16) / 16**12


def _user(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "user")


def _between(text: str, tag: str) -> str:
    start, end = text.rfind(f"<{tag}>"), text.rfind(f"</{tag}>")
    return text[start:end] if 0 <= start < end else ""


def _set_scores(reply: Any, score: int) -> Any:
    if isinstance(reply, dict):
        out = {}
        for key, value in reply.items():
            if key == "scores" and isinstance(value, dict):
                out[key] = {k: score if isinstance(v, int) else v for k, v in value.items()}
            else:
                out[key] = _set_scores(value, score)
        return out
    if isinstance(reply, list):
        return [_set_scores(v, score) for v in reply]
    return reply


class Handler(loopback.Handler):
    """The gate benchmark's handler (keep-alive, no Nagle, JSON replies), serving this benchmark's routes."""

    server: Servers  # type: ignore[assignment]

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        svc, judge = _SVC.match(self.path), _JUDGE.match(self.path)
        if svc:
            kind, run, bad = svc.groups()
            found = _CASE.search(str(body.get("question", "")))
            case = int(found.group(1)) if found else -1
            bad_set = {int(b) for b in bad.split(",") if b.isdigit()}
            self._reply(200, {"answer": answer(kind, run, bad_set, case), "retrieved": PASSAGES})
        elif judge:
            self._judge(judge.group(1), body)
        else:
            self._reply(404, {"error": "not found"})

    def _judge(self, world: str, body: dict[str, Any]) -> None:
        fmt = body.get("response_format") or {}
        spec = fmt.get("json_schema", {}) if fmt.get("type") == "json_schema" else {}
        schema = spec.get("schema", {})
        wrong = draw(world, body.get("messages"), body.get("seed")) < self.server.flip
        text = _user(body)
        if spec.get("name") == "ragjudge_pairwise":
            a_worse, b_worse = WORSE in _between(text, "answer_a"), WORSE in _between(text, "answer_b")
            right = "B" if a_worse and not b_worse else "A" if b_worse and not a_worse else "tie"
            if wrong:
                others = [w for w in ("A", "B", "tie") if w != right]
                right = others[int(draw(world, body.get("messages"), body.get("seed"), "which") * 2)]
            content = json.dumps({"winner": right, "reason": f"{right}: the refund time decides"})
        else:
            good = WORSE not in text
            reply = instance(schema, schema.get("$defs", {})) if schema else {}
            content = json.dumps(_set_scores(reply, 5 if good != wrong else 1))
        with self.server.lock:
            self.server.calls += 1
        self._reply(
            200,
            {
                "id": "chatcmpl-noisy",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "noisy"),
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
                "usage": {
                    "prompt_tokens": len(text) // 4,
                    "completion_tokens": 20,
                    "total_tokens": len(text) // 4 + 20,
                },
            },
        )


class Servers(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, flip: float) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.flip = flip
        self.lock = threading.Lock()
        self.calls = 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flip", type=float, default=0.1)
    args = ap.parse_args(argv)
    server = Servers(args.flip)
    print(json.dumps({"base": f"http://127.0.0.1:{server.server_address[1]}"}), flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
