"""Judge tokens per case: one combined call (`judge.combined: true`) against two separate calls.

Run: python bench/judge_tokens.py. Prints Markdown tables; figures go in bench/README.md.

`ragjudge run` judges two case sets with the model judge pointed at the loopback OpenAI fake:
the bundled example's cases (Chinese and English, 4 out of scope) against the example RAG
service, whose passages are short (one policy paragraph each); and 40 English cases against a
loopback service that returns five passages of 1,200 characters (the default
`judge.excerpt_chars`) and a three-sentence answer, as a production retriever would.
The fake answers like a judge would (a reason line per dimension, one verdict per sentence of
the answer) and reports `usage` estimated from the text it was really sent and what it replied:
one token per CJK character, one per four other characters (OpenAI's rule of thumb for
English). The same replies are given in both modes (the combined reply is the rubric reply and
the claims reply in one object), so the difference is what the request shape costs. Characters
are counted too, as a tokenizer-free check.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragjudge.examples.rag_service import serve_in_thread  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI, Reply  # noqa: E402
from tests.fakes.rag import RagServer, answer  # noqa: E402

from ragjudge.cli import main as ragjudge  # noqa: E402

CASES = ROOT / "examples" / "cases" / "anchors.yaml"
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
_SENTENCE = re.compile(r"[^.!?。！？]+[.!?。！？]?")


def tokens(text: str) -> int:
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


class Judge:
    """A fake judge that replies plausibly and reports usage from what it was sent."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any], _i: int) -> Reply:
        system = str(body["messages"][0]["content"])
        user = str(body["messages"][-1]["content"]) if len(body["messages"]) == 2 else ""
        schema = body.get("response_format", {}).get("json_schema", {}).get("schema", {})
        dims = schema.get("$defs", {}).get("Scores", {}).get("required", [])
        answer = user.split("<answer>\n", 1)[-1].split("\n</answer>", 1)[0]
        first = re.search(r"^\[([^\]]+)\]", user, re.MULTILINE)
        reply: dict[str, Any] = {}
        if dims:
            reply["scores"] = dict.fromkeys(dims, 4)
            reply["reasoning"] = {d: f"{d}: the answer is specific and matches what the passages say." for d in dims}
        if system.startswith(("You are a strict auditor", "You judge one answer")):
            reply["claims"] = [
                {
                    "claim": s.strip(),
                    "supported": first is not None,
                    "evidence_id": first.group(1) if first else None,
                    "reason": "the passage states it" if first else "no passage was shown",
                }
                for s in _SENTENCE.findall(answer)
                if s.strip()
            ]
        if "reference_points" in schema.get("properties", {}):
            listed = re.search(r"## Reference answer \(its points, one per line\)\n((?:- .*\n)+)", user)
            if listed:
                points = [line[2:] for line in listed.group(1).splitlines()]
            else:
                text = re.search(r"## Reference answer\n(.*?)\n\n", user, re.S)
                points = [p for p in re.split(r"[。；;！？\n]+", text.group(1) if text else "") if p.strip()][:1]
            reply["reference_points"] = [
                {"point": p, "verdict": "missing", "quote": "", "reason": "the answer does not say this."}
                for p in points
            ]
        content = json.dumps(reply, ensure_ascii=False)
        prompt = "".join(str(m["content"]) for m in body["messages"])
        usage = (tokens(prompt), tokens(content))
        with self.lock:
            self.calls.append({"prompt_chars": len(prompt), "completion_chars": len(content), "usage": usage})
        return Reply(content=content, usage=usage)


THREE_CRITERIA = {
    name: {"question": question, "score_1": low, "score_5": high}
    for name, question, low, high in (
        ("asks_for_order", "Does the answer ask for the order number when it is needed?", "never", "exactly when"),
        ("next_step", "Does the answer tell the customer what to do next?", "no next step", "one clear next step"),
        ("polite", "Is the answer polite without filler?", "rude or full of filler", "polite and direct"),
    )
}


def run(
    url: str, cases: Path, combined: bool, folder: Path, reference: bool = True, criteria: dict[str, Any] | None = None
) -> dict[str, Any]:
    judge = Judge()
    with FakeOpenAI(judge) as fake:
        config = folder / f"ragjudge-{combined}-{reference}-{bool(criteria)}.yml"
        config.write_text(
            json.dumps(
                {
                    # One at a time, and a fresh cache: the same cache hits in the same order on every run.
                    "endpoint": {"url": url, "concurrency": 1},
                    "cases": [str(cases)],
                    "judge": {
                        "provider": "openai",
                        "base_url": fake.base_url,
                        "api_key": "sk-bench-000000",
                        "cache": str(folder / f"cache-{cases.stem}-{combined}-{reference}-{bool(criteria)}"),
                        "concurrency": 1,
                        "combined": combined,
                        "reference": reference,
                        "criteria": criteria or {},
                    },
                    "gate": {"case": {"latency_ms": "<= 10000"}, "suite": {"pass_rate": ">= 0.0"}},
                }
            ),
            encoding="utf-8",
        )
        report_path = folder / f"report-{combined}-{reference}-{bool(criteria)}.json"
        with contextlib.redirect_stdout(io.StringIO()):
            code = ragjudge(["run", "--config", str(config), "--report", str(report_path)])
        assert code == 0, code
    report = json.loads(report_path.read_text(encoding="utf-8"))
    answered = sum(1 for c in report["cases"] if not c["trace"]["refused"] and c["trace"]["answer"].strip())
    assert report["suite"]["judge_tokens"] == sum(sum(c["usage"]) for c in judge.calls)
    return {
        "cache_hits": report["suite"]["judge_cache_hits"],
        "cases": len(report["cases"]),
        "answered": answered,
        "calls": len(judge.calls),
        "prompt_tokens": sum(c["usage"][0] for c in judge.calls),
        "completion_tokens": sum(c["usage"][1] for c in judge.calls),
        "prompt_chars": sum(c["prompt_chars"] for c in judge.calls),
        "completion_chars": sum(c["completion_chars"] for c in judge.calls),
    }


SENTENCE = "The policy applies to every order placed through the official store and its partner outlets. "
LONG_ANSWER = (
    "Refunds are issued within 1 business day after the return passes inspection. "
    "Card refunds then take 3-5 business days to appear. Store credit is available at once."
)


def long_passage_service(folder: Path) -> tuple[RagServer, Path]:
    """40 cases, each answered with five 1,200-character passages."""
    passages = {f"doc-{k}": (f"Passage {k}. " + SENTENCE * 20)[:1200] for k in range(5)}
    replies = {f"Question {i}: how long do refunds take?": answer(f"{LONG_ANSWER} Ref {i}.", list(passages), passages)
               for i in range(40)}  # fmt: skip
    cases = folder / "long.jsonl"
    cases.write_text("".join(json.dumps({"id": f"l{i}", "question": q}) + "\n" for i, q in enumerate(replies)))
    return RagServer(replies), cases


def table(title: str, rows: dict[str, dict[str, Any]]) -> None:
    n, answered = rows["combined"]["cases"], rows["combined"]["answered"]
    hits = ", ".join(f"{'true' if m == 'combined' else 'false'}: {r['cache_hits']}" for m, r in rows.items())
    print(
        f"**{title}**: {n} cases, {answered} answered, {n - answered} refused (cache hits on repeated prompts {hits})\n"
    )
    print(
        "| judge.combined | calls/case | prompt tok/case | completion tok/case | total tok/case | prompt chars/case |"
    )
    print("|---|---|---|---|---|---|")
    for mode, r in rows.items():
        total = r["prompt_tokens"] + r["completion_tokens"]
        print(
            f"| {'true' if mode == 'combined' else 'false'} | {r['calls'] / n:.2f} | {r['prompt_tokens'] / n:.0f} | "
            f"{r['completion_tokens'] / n:.0f} | {total / n:.0f} | {r['prompt_chars'] / n:.0f} |"
        )
    sep, comb = rows["separate"], rows["combined"]
    saved = 1 - (comb["prompt_tokens"] + comb["completion_tokens"]) / (sep["prompt_tokens"] + sep["completion_tokens"])
    print(
        f"\ncombined: {saved:.1%} fewer judge tokens, {1 - comb['calls'] / sep['calls']:.1%} fewer calls, "
        f"{1 - comb['prompt_chars'] / sep['prompt_chars']:.1%} fewer prompt characters\n"
    )


def extras_table(rows: dict[str, dict[str, Any]]) -> None:
    """What the reference and the criteria add to the one combined call."""
    base = rows["without reference or criteria"]
    n = base["cases"]
    print("| combined call | calls/case | prompt tok/case | completion tok/case | total tok/case | vs without |")
    print("|---|---|---|---|---|---|")
    for label, r in rows.items():
        total = r["prompt_tokens"] + r["completion_tokens"]
        ratio = total / (base["prompt_tokens"] + base["completion_tokens"])
        print(
            f"| {label} | {r['calls'] / n:.2f} | {r['prompt_tokens'] / n:.0f} | {r['completion_tokens'] / n:.0f} | "
            f"{total / n:.0f} | {ratio:.2f}x |"
        )
    print()


def main() -> int:
    server, url = serve_in_thread()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        try:
            table(
                "example service",
                {m: run(url, CASES, m == "combined", folder, reference=False) for m in ("separate", "combined")},
            )
            print("**example service, reference and criteria** (every case has `expected`)\n")
            extras_table(
                {
                    "without reference or criteria": run(url, CASES, True, folder, reference=False),
                    "with the reference": run(url, CASES, True, folder),
                    "with the reference and three criteria": run(url, CASES, True, folder, criteria=THREE_CRITERIA),
                }
            )
        finally:
            server.shutdown()
            server.server_close()
        rag, cases = long_passage_service(folder)
        with rag:
            rows = {m: run(rag.url, cases, m == "combined", folder, reference=False) for m in ("separate", "combined")}
        table("five 1,200-character passages per answer", rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
