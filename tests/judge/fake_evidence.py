"""A loopback evidence judge: a FakeOpenAI responder that reads the passages out of the prompt.

`evidence_responder(score)` answers the evidence judge's requests by calling
`score(claim, passage, index, count)` for every passage it finds in the user message, and
quotes each passage's first sentence verbatim. Requests from the other judges (rubric,
faithfulness) go to `other`. Passages carry their own truth as markers, so a test can build
judges that score by content (unbiased) or by position or length (biased).

`scripted_judge(script)` answers the rubric and combined calls from a script keyed by the question shown:
the team's criteria scores and the reference's point verdicts, for calibrating those against people.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.openai_server import Reply, Responder

KEY = "sk-test-calibrate-0000"
_PASSAGE = re.compile(r'<passage index="(\d+)">\n(.*?)\n</passage>', re.DOTALL)
_CLAIM = re.compile(r"<claim>\n(.*?)\n</claim>", re.DOTALL)

Score = Callable[[str, str, int, int], int]
"""(claim, passage text, index in this call, passages in this call) -> 0..5."""


def is_evidence(body: dict[str, Any]) -> bool:
    return str(body["messages"][0]["content"]).startswith("You score evidence")


def parse_prompt(body: dict[str, Any]) -> tuple[str, list[str]]:
    """The claim and the passages (in the order shown) of an evidence request."""
    user = str(body["messages"][1]["content"])
    claim = _CLAIM.search(user)
    assert claim is not None, user[:200]
    found = [(int(i), text) for i, text in _PASSAGE.findall(user)]
    assert [i for i, _ in found] == list(range(len(found))), "passages are numbered from 0 in order"
    return claim.group(1), [text for _, text in found]


def by_marker(claim: str, passage: str, index: int, count: int) -> int:
    """Scores by content only: the passage says how well it supports the claim."""
    for marker, score in (("[S5]", 5), ("[S4]", 4), ("[S3]", 3), ("[S2]", 2), ("[S1]", 1)):
        if marker in passage:
            return score
    return 0


def first_wins(claim: str, passage: str, index: int, count: int) -> int:
    """Position-biased: whatever comes first gets a 5."""
    return 5 if index == 0 else by_marker(claim, passage, index, count)


def longer_is_better(claim: str, passage: str, index: int, count: int) -> int:
    """Length-biased: one point more for a long passage."""
    base = by_marker(claim, passage, index, count)
    return min(5, base + 1) if len(passage) > 120 else base


def first_sentence(passage: str) -> str:
    return passage.split(". ")[0].strip()


def evidence_json(scores: list[int], quotes: list[str], summary: str = "overall fine") -> str:
    return json.dumps(
        {
            "scores": [
                {
                    "passage_index": i,
                    "score": s,
                    "confidence": [0.6, 0.9],
                    "rationale": "The passage speaks to the claim.",
                    "key_quote": q,
                }
                for i, (s, q) in enumerate(zip(scores, quotes, strict=True))
            ],
            "summary": summary,
        },
        ensure_ascii=False,
    )


def evidence_responder(
    score: Score = by_marker,
    quote: Callable[[str], str] = first_sentence,
    other: Responder | None = None,
) -> Responder:
    def responder(body: dict[str, Any], call_index: int) -> Reply:
        if not is_evidence(body):
            assert other is not None, "an unexpected non-evidence request"
            return other(body, call_index)
        claim, passages = parse_prompt(body)
        scores = [score(claim, p, i, len(passages)) for i, p in enumerate(passages)]
        return Reply(content=evidence_json(scores, [quote(p) for p in passages]))

    return responder


def passage(marker: str, topic: str, n: int = 0) -> str:
    """A passage whose first sentence is quotable and whose marker carries its true score."""
    return f"Passage {n} about {topic} {marker}. It has a second sentence about {topic}."


# --- a whole `ragjudge run` with the model judge ---------------------------------------------------

RUBRIC = json.dumps(
    {
        "scores": {d: 4 for d in ("grounding", "relevance", "calibration", "citations", "tone")},
        "reasoning": {d: f"{d}: fine" for d in ("grounding", "relevance", "calibration", "citations", "tone")},
    }
)


def other_judges(body: dict[str, Any], call_index: int) -> Reply:
    """The rubric and faithfulness judges, separate or combined: every claim supported by the first passage shown."""
    system = str(body["messages"][0]["content"])
    user = str(body["messages"][1]["content"])
    first = re.search(r"^\[([^\]]+)\]", user, re.MULTILINE)
    evidence_id = first.group(1) if first else None
    claims = [{"claim": "The answer's claim.", "supported": evidence_id is not None, "evidence_id": evidence_id,
               "reason": "stated there"}]  # fmt: skip
    if system.startswith("You are a strict auditor"):
        return Reply(content=json.dumps({"claims": claims}))
    if system.startswith("You judge one answer"):
        return Reply(content=json.dumps({**json.loads(RUBRIC), "claims": claims}))
    return Reply(content=RUBRIC)


def run_config(
    folder: Any,
    base_url: str,
    rag_url: str,
    cases: list[dict[str, Any]],
    case_rules: dict[str, str] | None = None,
    endpoint: dict[str, Any] | None = None,
    **judge: Any,
) -> Any:
    """Write `ragjudge.yml` and `cases.yaml` into `folder` for the model judge; returns the config path.

    `endpoint` adds to (or overrides) the endpoint section."""
    import yaml

    (folder / "cases.yaml").write_text(yaml.safe_dump(cases, allow_unicode=True), encoding="utf-8")
    config = {
        "endpoint": {"url": rag_url, "timeout_s": 10, "retries": 0, **(endpoint or {})},
        "judge": {
            "provider": "openai",
            "base_url": base_url,
            "api_key": KEY,
            "cache": None,
            "max_retries": 0,
            **judge,
        },
        "cases": ["cases.yaml"],
        "gate": {"case": case_rules or {"latency_ms": "<= 10000"}, "suite": {"pass_rate": ">= 0.0"}},
    }
    path = folder / "ragjudge.yml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


# --- a judge scripted per question: criteria scores and reference-point verdicts --------------------

_QUESTION = re.compile(r"## Question\n(.*)\n")
_ASKED = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)": N')


@dataclass(frozen=True)
class Scripted:
    """What the scripted judge says of the answer to one question: any criterion left out scores 4."""

    criteria: dict[str, int] = field(default_factory=dict)
    points: list[tuple[str, str, str]] = field(default_factory=list)
    """(point, verdict, quote) per reference point returned."""
    broken: bool = False
    """Reply with something that is not JSON (the judgement is then unscored)."""


def scripted_judge(script: dict[str, Scripted]) -> Responder:
    """The rubric or combined call, answered from `script` by the question shown: every score asked (read from
    the reply format the prompt gives), one claim supported by the first passage, and the scripted points."""

    def responder(body: dict[str, Any], call_index: int) -> Reply:
        system = str(body["messages"][0]["content"])
        user = str(body["messages"][1]["content"])
        first = re.search(r"^\[([^\]]+)\]", user, re.MULTILINE)
        evidence_id = first.group(1) if first else None
        claims = [{"claim": "The answer's claim.", "supported": evidence_id is not None, "evidence_id": evidence_id,
                   "reason": "stated there"}]  # fmt: skip
        if system.startswith("You are a strict auditor"):  # the faithfulness judge, asked apart: no question shown
            return Reply(content=json.dumps({"claims": claims}))
        question = _QUESTION.search(user)
        assert question is not None, user[:200]
        plan = script[question.group(1)]
        if plan.broken:
            return Reply(content="no idea")
        asked = _ASKED.findall(system.rsplit("Reply with only this JSON object:", 1)[1])
        reply: dict[str, Any] = {
            "scores": {name: plan.criteria.get(name, 4) for name in asked},
            "reasoning": {name: f"{name}: as scripted" for name in asked},
        }
        if system.startswith("You judge one answer"):  # the combined call: the claims too
            reply["claims"] = claims
        if '"reference_points"' in system:
            reply["reference_points"] = [
                {"point": point, "verdict": verdict, "quote": quote, "reason": "as scripted"}
                for point, verdict, quote in plan.points
            ]
        return Reply(content=json.dumps(reply, ensure_ascii=False))

    return responder
