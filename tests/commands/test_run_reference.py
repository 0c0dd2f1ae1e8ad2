"""`ragjudge run` judging answers against their reference and the team's criteria, as a user would meet it.

A loopback RAG service that retrieves a stale refund policy, and a loopback OpenAI-compatible judge (the real
`openai` SDK) that reads each request the way a judge would: the reference's points, the criteria it was asked,
the answer. The same service is also judged by the offline judge.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.cli import main
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.rag import RagServer, answer
from tests.judge.openai_helpers import KEY, user_text

ENV_KEY = "RAGJUDGE_TEST_OPENAI_KEY"
PASSAGES = {
    "doc-refund-2021": "（2021 版，已归档）签收 15 天内支持 15 天无理由退货。",
    "doc-refund": "签收后 7 天内支持无理由退货，申请时需提供订单号。",
    "doc-ship": "订单发货后 48 小时内可查询物流，查询需提供订单号。",
}
Q_STALE = "退货期限是多久？"
Q_EMPTY = "可以退货吗？"
Q_RIGHT = "买了东西不满意能退吗？"
Q_SHIP = "我的快递到哪了？"
Q_BADPOINT = "退款多久到账？"
Q_NOCRIT = "物流多久更新？"

A_STALE = "签收 15 天内支持 15 天无理由退货。[doc-refund-2021]"
A_EMPTY = "有期限，可以退货。"
A_RIGHT = "收到货后一周内（7 天）可以无理由退货，申请时请提供订单号。[doc-refund]"
A_SHIP = "发货后 48 小时内可以查到物流信息。[doc-ship]"
A_BADPOINT = "退款会原路退回。[doc-refund]"
A_NOCRIT = "发货后 48 小时内更新。[doc-ship]"

CASES: list[dict[str, Any]] = [
    {"id": "stale", "question": Q_STALE, "category": "退款", "expected": ["7 天无理由退货", "需提供订单号"]},
    {"id": "empty", "question": Q_EMPTY, "category": "退款", "expected": "7 天无理由退货；需提供订单号。"},
    {"id": "right", "question": Q_RIGHT, "category": "退款", "expected": ["7 天无理由退货", "需提供订单号"]},
    {"id": "ship", "question": Q_SHIP, "category": "物流", "expected": ["48 小时内可查询物流"]},
    {"id": "badpoint", "question": Q_BADPOINT, "category": "退款", "expected": ["退款原路退回"]},
    {"id": "nocrit", "question": Q_NOCRIT, "category": "物流"},
]
RAG = {
    Q_STALE: answer(A_STALE, ["doc-refund-2021"], PASSAGES),
    Q_EMPTY: answer(A_EMPTY, ["doc-refund"], PASSAGES),
    Q_RIGHT: answer(A_RIGHT, ["doc-refund"], PASSAGES),
    Q_SHIP: answer(A_SHIP, ["doc-ship"], PASSAGES),
    Q_BADPOINT: answer(A_BADPOINT, ["doc-refund"], PASSAGES),
    Q_NOCRIT: answer(A_NOCRIT, ["doc-ship"], PASSAGES),
}
CRITERION = {
    "question": "Does the answer ask for, or tell the customer to have ready, the order number when it is needed?",
    "score_1": "It never mentions the order number although the customer will need it.",
    "score_5": "It tells the customer exactly which order number to give and where to find it.",
    "categories": ["物流"],
}
ORDER_REASON = "it never says the order number is needed to look up the parcel"

# What the judge says of each reference point, by answer: (verdict, quote, reason).
VERDICTS: dict[str, dict[str, tuple[str, str, str]]] = {
    A_STALE: {
        "7 天无理由退货": ("contradicted", "签收 15 天内支持 15 天无理由退货", "15 days, not 7"),
        "需提供订单号": ("missing", "", "no word of the order number"),
    },
    A_EMPTY: {
        "7 天无理由退货": ("missing", "", "no period is given"),
        "需提供订单号": ("missing", "", "nothing about the order number"),
    },
    A_RIGHT: {
        "7 天无理由退货": ("covered", "一周内（7 天）可以无理由退货", "7 days, no reason needed"),
        "需提供订单号": ("covered", "申请时请提供订单号", "asks for the order number"),
    },
    A_SHIP: {"48 小时内可查询物流": ("covered", "发货后 48 小时内可以查到物流信息", "same promise")},
}


def _listed_points(text: str) -> list[str] | None:
    match = re.search(r"## Reference answer \(its points, one per line\)\n((?:- .*\n)+)", text)
    return [line[2:] for line in match.group(1).splitlines()] if match else None


def _reference_text(text: str) -> str | None:
    match = re.search(r"## Reference answer\n(.*?)\n\n", text, re.S)
    return match.group(1) if match else None


def judge(body: dict[str, Any], call_index: int) -> Reply:
    """A combined reply built the way a judge reads the request."""
    text = user_text(body)
    answer_text = re.search(r"<answer>\n(.*?)\n</answer>", text, re.S).group(1)  # type: ignore[union-attr]
    schema = body["response_format"]["json_schema"]["schema"]
    scores_schema = schema["properties"]["scores"]
    if "$ref" in scores_schema:
        scores_schema = schema["$defs"][scores_schema["$ref"].rsplit("/", 1)[1]]
    asked = list(scores_schema["properties"])
    scores = {name: 4 for name in asked}
    reasoning = {name: f"{name}: fine" for name in asked}
    if "asks_for_order" in asked:
        scores["asks_for_order"], reasoning["asks_for_order"] = 2, ORDER_REASON
    if answer_text == A_NOCRIT:  # this judge forgets the team's criterion, every time
        scores.pop("asks_for_order", None)
        reasoning.pop("asks_for_order", None)
    reply: dict[str, Any] = {
        "scores": scores,
        "reasoning": reasoning,
        "claims": [{"claim": answer_text, "supported": True, "evidence_id": "doc-ship", "reason": "in a passage"}],
        "confidence_note": "models add keys nobody asked for",
    }
    ids = re.findall(r"^\[([\w-]+)\]", text, re.M)
    reply["claims"][0]["evidence_id"] = ids[0] if ids else None
    if "reference_points" in schema["properties"]:
        points = _listed_points(text)
        if points is None:  # a text reference: this judge splits it on the full-width semicolon
            points = [p.strip("。 ") for p in (_reference_text(text) or "").split("；")]
        if answer_text == A_BADPOINT:  # this judge invents a point nobody wrote, every time
            points = ["30 天价格保护"]
        verdicts = VERDICTS.get(answer_text, {})
        reply["reference_points"] = [
            dict(
                zip(
                    ("point", "verdict", "quote", "reason"),
                    (p, *verdicts.get(p, ("missing", "", "absent"))),
                    strict=True,
                )
            )
            for p in points
        ]
    return Reply(content=json.dumps(reply, ensure_ascii=False))


@pytest.fixture
def judge_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(judge) as fake:
        yield fake


def _config(folder: Path, rag_url: str, judge: dict[str, Any]) -> None:
    (folder / "cases.yaml").write_text(yaml.safe_dump(CASES, allow_unicode=True), encoding="utf-8")
    config = {
        "endpoint": {"url": rag_url, "timeout_s": 5},
        "cases": ["cases.yaml"],
        "judge": judge,
        "gate": {
            "case": {"answer_correctness": ">= 0.8", "criteria.asks_for_order": ">= 4"},
            "suite": {"pass_rate": ">= 0.9"},
        },
    }
    (folder / "ragjudge.yml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")


def _run(folder: Path) -> tuple[int, dict[str, dict[str, Any]], dict[str, Any]]:
    config = str(folder / "ragjudge.yml")
    code = main(["run", "--config", config, "--report", str(folder / "r.json"), "--log", str(folder / "log.jsonl")])
    report = json.loads((folder / "r.json").read_text(encoding="utf-8"))
    return code, {c["id"]: c for c in report["cases"]}, report


@pytest.fixture
def judged(
    tmp_path: Path, judge_server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, dict[str, dict[str, Any]], dict[str, Any], FakeOpenAI]:
    monkeypatch.setenv(ENV_KEY, KEY)
    with RagServer(RAG) as rag:
        judge_cfg = {
            "provider": "openai",
            "base_url": judge_server.base_url,
            "api_key": f"${{{ENV_KEY}}}",
            "max_retries": 0,
            "criteria": {"asks_for_order": CRITERION},
        }
        _config(tmp_path, rag.url, judge_cfg)
        code, cases, report = _run(tmp_path)
    return code, cases, report, judge_server


def test_an_answer_from_a_stale_document_fails_naming_the_contradicted_point(judged: Any) -> None:
    code, cases, _, _ = judged
    assert code == 1
    stale = cases["stale"]
    assert stale["status"] == "fail"
    # The judge tied the answer's claim to the archived passage: the reason names where the stale words came from.
    assert stale["failed_conditions"] == [
        'contradicts the reference: "7 天无理由退货" (answer: "签收 15 天内支持 15 天无理由退货", from passage '
        "doc-refund-2021)",
        'answer_correctness 0.000 < 0.8 (misses a reference point: "需提供订单号")',
    ]
    assert stale["metrics"]["answer_correctness"] == 0.0 and stale["metrics"]["reference_contradictions"] == 1
    assert [p["verdict"] for p in stale["judge"]["reference_points"]] == ["contradicted", "missing"]
    # Faithful to what it retrieved, all the same: that is why faithfulness alone let it pass.
    assert stale["metrics"]["faithfulness"] == 1.0


def test_an_answer_that_says_nothing_fails_answer_correctness(judged: Any) -> None:
    empty = judged[1]["empty"]
    assert empty["status"] == "fail"
    assert empty["failed_conditions"] == [
        'answer_correctness 0.000 < 0.8 (misses a reference point: "7 天无理由退货"; '
        'misses a reference point: "需提供订单号")'
    ]


def test_a_reworded_right_answer_passes(judged: Any) -> None:
    right = judged[1]["right"]
    assert (right["status"], right["failed_conditions"]) == ("pass", [])
    assert right["metrics"]["answer_correctness"] == 1.0 and right["metrics"]["reference_contradictions"] == 0
    assert "criteria.asks_for_order" not in right["metrics"]  # the criterion is scoped to 物流


def test_a_criterion_scoped_to_one_category_is_scored_there_only_in_the_same_call(judged: Any) -> None:
    _, cases, report, fake = judged
    ship = cases["ship"]
    assert ship["status"] == "fail"
    assert ship["failed_conditions"] == [f"criteria.asks_for_order 2 < 4: {ORDER_REASON}"]
    assert ship["judge"]["criteria"] == {"asks_for_order": {"score": 2, "reason": ORDER_REASON}}
    assert ship["metrics"]["criteria.asks_for_order"] == 2
    asked = {
        re.search(r"## Question\n(.*?)\n", user_text(r["body"])).group(1)  # type: ignore[union-attr]
        for r in fake.requests
        if "asks_for_order" in r["body"]["messages"][0]["content"]
    }
    assert asked == {Q_SHIP, Q_NOCRIT}
    assert report["suite"]["criteria.asks_for_order_mean"] == 2.0


def test_a_judge_that_invents_a_point_or_omits_a_criterion_is_retried_once_then_the_case_errors(
    judged: Any,
) -> None:
    _, cases, report, fake = judged
    bad = cases["badpoint"]
    assert bad["status"] == "error"
    invalid = (
        "judge reply invalid after 2 attempts: reference_points.0.point: "
        "'30 天价格保护' is not one of the reference's points as given"
    )
    assert bad["failed_conditions"][:1] == [
        f"reference, answer_correctness and criteria.asks_for_order unscored: {invalid}"
    ]
    nocrit = cases["nocrit"]
    assert nocrit["status"] == "error"
    assert nocrit["failed_conditions"][0].startswith(
        "criteria.asks_for_order unscored: judge reply invalid after 2 attempts: scores.asks_for_order: Field required"
    )
    # One call per answered case, plus the one corrective retry of each of the two bad replies.
    assert len(fake.requests) == len(CASES) + 2
    assert report["verdict"] == "fail"


def test_a_key_nobody_asked_for_is_ignored_and_named_in_the_log(judged: Any, tmp_path: Path) -> None:
    lines = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text(encoding="utf-8").splitlines()]
    judged_lines = [line for line in lines if line.get("judge_kind") == "combined" and line.get("parsed")]
    assert len(judged_lines) == 4  # the four valid replies
    assert all(line["ignored_keys"] == ["confidence_note"] for line in judged_lines)


def test_the_offline_judge_catches_the_stale_number_and_the_empty_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with RagServer(RAG) as rag:
        _config(tmp_path, rag.url, {"provider": "offline", "criteria": {"asks_for_order": CRITERION}})
        code, cases, _ = _run(tmp_path)
    assert code == 1
    assert cases["stale"]["failed_conditions"][0] == (
        'contradicts the reference: "7 天无理由退货" (answer: "签收 15 天内支持 15 天无理由退货", from passage '
        "doc-refund-2021)"
    )
    assert cases["empty"]["status"] == "fail"
    assert cases["empty"]["metrics"]["answer_correctness"] == 0.0
    # Words cannot score a criterion: a rule on one makes the case an error, saying why.
    assert cases["ship"]["status"] == "error"
    assert cases["ship"]["failed_conditions"][0] == (
        "criteria.asks_for_order unscored: the offline judge cannot score criteria (set judge.provider: openai)"
    )


def test_judge_reference_false_sends_no_reference(
    tmp_path: Path, judge_server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_KEY, KEY)
    with RagServer(RAG) as rag:
        _config(
            tmp_path,
            rag.url,
            {"provider": "openai", "base_url": judge_server.base_url, "api_key": f"${{{ENV_KEY}}}", "reference": False},
        )
        # Without the reference, answer_correctness has no value: a rule on it skips, never passes a case by itself.
        cfg = yaml.safe_load((tmp_path / "ragjudge.yml").read_text(encoding="utf-8"))
        cfg["gate"]["case"] = {"faithfulness": ">= 0.5"}
        (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
        code, cases, _ = _run(tmp_path)
    assert code == 0
    assert all("Reference answer" not in user_text(r["body"]) for r in judge_server.requests)
    assert "reference_points" not in cases["stale"]["judge"] and cases["stale"]["status"] == "pass"


def test_an_unknown_criterion_named_by_a_case_is_exit_2_naming_the_file_and_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cases.yaml").write_text(
        yaml.safe_dump([{"id": "c1", "question": "q?", "criteria": ["polite"]}]), encoding="utf-8"
    )
    (tmp_path / "ragjudge.yml").write_text(
        yaml.safe_dump({"endpoint": {"url": "http://127.0.0.1:9/ask"}, "cases": ["cases.yaml"]}), encoding="utf-8"
    )
    assert main(["run", "--config", str(tmp_path / "ragjudge.yml")]) == 2
    err = capsys.readouterr().err
    assert f"ragjudge: error: {tmp_path / 'cases.yaml'}:1: case 'c1': criteria: no criterion named 'polite' " in err
    assert "(judge.criteria defines: none)" in err


@pytest.mark.parametrize(
    ("criteria", "message"),
    [
        ({"2fast": CRITERION}, "'2fast' is not a criterion name"),
        ({"tone": CRITERION}, "'tone' is a built-in judge dimension"),
    ],
)
def test_a_bad_criterion_name_in_the_config_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], criteria: dict[str, Any], message: str
) -> None:
    (tmp_path / "ragjudge.yml").write_text(
        yaml.safe_dump({"judge": {"criteria": criteria}}, allow_unicode=True), encoding="utf-8"
    )
    assert main(["run", "--config", str(tmp_path / "ragjudge.yml")]) == 2
    assert message in capsys.readouterr().err


def test_against_main_answer_correctness_has_a_delta_and_a_regression_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    main_replies = {**RAG, Q_STALE: answer(A_RIGHT, ["doc-refund"], PASSAGES)}  # main answered it right
    with RagServer(main_replies) as rag:
        _config(tmp_path, rag.url, {"provider": "offline"})
        cfg = yaml.safe_load((tmp_path / "ragjudge.yml").read_text(encoding="utf-8"))
        cfg["gate"] = {"case": {"latency_ms": "<= 10000"}, "regression": {"answer_correctness_delta": ">= 0"}}
        (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
        assert main(["run", "--config", str(tmp_path / "ragjudge.yml"), "--report", str(tmp_path / "main.json")]) == 0
    with RagServer(RAG) as rag:  # the PR's service retrieves the archived policy for one question
        cfg["endpoint"]["url"] = rag.url
        (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
        args = ["run", "--config", str(tmp_path / "ragjudge.yml"), "--baseline", str(tmp_path / "main.json")]
        code = main([*args, "--report", str(tmp_path / "pr.json")])
    report = json.loads((tmp_path / "pr.json").read_text(encoding="utf-8"))
    (delta,) = [d for d in report["comparison"]["deltas"] if d["metric"] == "answer_correctness"]
    assert (delta["kind"], delta["comparable"], delta["cases"]) == ("delta", True, 5)
    assert delta["delta"] == pytest.approx(-1.0 / 5)  # one case of five judged fell from 1.0 to 0.0
    assert delta["test"].startswith("Wilcoxon signed-rank test on 5 paired cases")
    (rule,) = [r for r in report["comparison"]["rules"] if r["metric"] == "answer_correctness_delta"]
    # One case of five cannot be told from noise: the rule reads the delta and its p-value, and does not block.
    assert rule["reason"] == (
        "answer_correctness_delta -0.200 < +0.000 but not significant (p 1.000, not below 0.05): not blocking"
    )
    assert rule["passed"] is True and code == 1  # the case itself fails on its contradicted point
