"""`ragjudge calibrate` end to end: reference values on many label sets, verdicts, exit codes, messages."""

from __future__ import annotations

import json
import math
import random
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score, confusion_matrix, f1_score
from statsmodels.stats.proportion import proportion_confint

from ragjudge.calibrate.fingerprint import fingerprint_of
from ragjudge.cli import main
from ragjudge.config.loader import load_config
from tests.fakes.openai_server import FakeOpenAI
from tests.judge.fake_evidence import (
    KEY,
    Scripted,
    by_marker,
    evidence_responder,
    first_wins,
    other_judges,
    passage,
    scripted_judge,
)

KEYS = ("n", "agreement", "ci95", "kappa", "tpr", "tnr", "confusion", "mae", "mean_error", "weighted_kappa",
        "spearman", "weighted_f1", "verdict", "judge_fingerprint")  # fmt: skip


@dataclass
class Result:
    code: int
    out: str
    err: str
    report: dict[str, Any]


def calibrate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str, rows: Any = None) -> Result:
    report = tmp_path / "report.json"
    argv = ["calibrate", *args, "--report", str(report)]
    if rows is not None:
        labels = tmp_path / "labels.jsonl"
        labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        argv += ["--labels", str(labels)]
    code = main(argv)
    out, err = capsys.readouterr()
    data = json.loads(report.read_text(encoding="utf-8")) if report.exists() else {}
    if report.exists():
        report.unlink()
    return Result(code, out, err, data)


def _rows(human: list[int], judge: list[float]) -> list[dict[str, Any]]:
    return [{"id": f"x{i}", "human": h, "judge": j} for i, (h, j) in enumerate(zip(human, judge, strict=True))]


def _label_sets(seed: int) -> list[tuple[list[int], list[int]]]:
    """Binary and ordinal (1..5, 0..5) label sets of several sizes, from random to near-perfect judges."""
    rng = random.Random(seed)
    out = []
    for scale in ([0, 1], [1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5]):
        for size in (6, 20, 50, 120):
            for noise in (0.05, 0.3, 1.0):
                human = [rng.choice(scale) for _ in range(size)]
                judge = [rng.choice(scale) if rng.random() < noise else h for h in human]
                if len(set(human)) == 1 or len(set(judge)) == 1:
                    continue
                out.append((human, judge))
    return out


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- reference values ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [11, 12])
def test_every_metric_matches_independent_references(ws: Path, capsys: pytest.CaptureFixture[str], seed: int) -> None:
    sets = _label_sets(seed)
    assert len(sets) >= 30
    for human, judge in sets:
        r = calibrate(ws, capsys, rows=_rows(human, [float(j) for j in judge])).report
        n = len(human)
        agree = sum(h == j for h, j in zip(human, judge, strict=True))
        lo, hi = proportion_confint(agree, n, alpha=0.05, method="wilson")
        assert r["n"] == n and r["agreement"] == pytest.approx(agree / n)
        assert r["ci95"] == pytest.approx([lo, hi], abs=1e-12)
        assert r["kappa"] == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)
        assert r["verdict"] == ("fit" if lo >= 0.8 else "unfit")
        binary = set(human) <= {0, 1}
        if binary:
            tn, fp, fn, tp = confusion_matrix(human, judge, labels=[0, 1]).ravel()
            assert r["confusion"] == {"tp": tp, "fp": fp, "tn": tn, "fn": fn}
            assert r["tpr"] == pytest.approx(tp / (tp + fn)) and r["tnr"] == pytest.approx(tn / (tn + fp))
            assert r["mae"] is None and r["weighted_kappa"] is None and r["spearman"] is None
        else:
            scale = list(range(min(human + judge), max(human + judge) + 1))
            qwk = cohen_kappa_score(human, judge, labels=scale, weights="quadratic")
            assert r["weighted_kappa"] == pytest.approx(qwk, abs=1e-12)
            assert r["spearman"] == pytest.approx(spearmanr(human, judge).statistic, abs=1e-12)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                wf1 = f1_score(human, judge, average="weighted", zero_division=0)
            assert r["weighted_f1"] == pytest.approx(wf1, abs=1e-12)
            diff = np.array(judge, dtype=float) - np.array(human, dtype=float)
            assert r["mae"] == pytest.approx(np.abs(diff).mean()) and r["mean_error"] == pytest.approx(diff.mean())
            assert r["tpr"] is None and r["confusion"] is None


def test_fractional_judge_scores_are_read_against_the_faithfulness_threshold(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / "ragjudge.yml").write_text("gate:\n  case: {faithfulness: '>= 0.6'}\n", encoding="utf-8")
    human = [1, 1, 0, 0, 1, 0]
    judge = [0.6, 0.9, 0.59, 0.0, 0.2, 1.0]  # -> 1, 1, 0, 0, 0, 1
    r = calibrate(ws, capsys, "--config", "ragjudge.yml", rows=_rows(human, judge)).report
    assert r["confusion"] == {"tp": 2, "fp": 1, "tn": 2, "fn": 1}


# --- seed 002's line and what it means ---------------------------------------------------------------


def _seed_rows(agree: int, n: int) -> list[dict[str, Any]]:
    return [{"id": i, "human": 1, "judgeScore": 1 if i < agree else 0} for i in range(n)]


def test_seed_002s_worked_example_is_unfit_with_exit_1(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = calibrate(ws, capsys, rows=_seed_rows(43, 50))
    assert r.code == 1
    lines = r.out.splitlines()
    assert lines[0] == "agreement=0.860 ci95=[0.738, 0.930] n=50"
    assert lines[1].startswith("The judge gave the human label on 43 of 50 items (86.0%)")
    assert "between 73.8% and 93.0%" in lines[1]
    assert lines[2] == (
        "→ unfit: the agreement could be as low as 0.738, below the bar of 0.8: "
        "fix the rubric or the model, then calibrate again."
    )
    assert r.report["verdict"] == "unfit" and r.report["reasons"] == ["agreement ci95 lower bound 0.738 < 0.8"]
    assert set(KEYS) <= set(r.report)


def test_a_good_judge_is_fit_with_exit_0(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = calibrate(ws, capsys, rows=_seed_rows(48, 50))
    assert r.code == 0 and r.report["verdict"] == "fit"
    assert "→ fit: even the pessimistic end of that interval (0.865) clears the bar of 0.8." in r.out


def test_min_agreement_moves_the_bar(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert calibrate(ws, capsys, "--min-agreement", "0.7", rows=_seed_rows(43, 50)).code == 0
    assert calibrate(ws, capsys, "--min-agreement", "0.9", rows=_seed_rows(49, 50)).code == 1


def test_too_few_labels_says_so_and_how_many_are_needed(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = calibrate(ws, capsys, rows=_seed_rows(10, 10))
    need = next(n for n in range(1, 100) if proportion_confint(n, n, method="wilson")[0] >= 0.8)
    assert r.code == 1 and r.report["labels_needed"] == need == 16
    assert (
        f"→ unfit: with only 10 labels the lower bound can never reach 0.8; even perfect agreement gives at most "
        f"0.722. Label at least {need} items, then calibrate again."
    ) in r.out
    assert calibrate(ws, capsys, "--min-agreement", "0.95", rows=_seed_rows(16, 16)).report["labels_needed"] == 73
    assert calibrate(ws, capsys, rows=_seed_rows(16, 16)).report["labels_needed"] is None


# --- --fail-under ---------------------------------------------------------------------------------------


def _ordinal(agree_shift: int = 0) -> list[dict[str, Any]]:
    human = [1, 2, 3, 4, 5] * 8
    judge = [min(5, h + (1 if i % 3 == 0 else 0) + agree_shift) for i, h in enumerate(human)]
    return _rows(human, [float(j) for j in judge])


def test_fail_under_replaces_the_agreement_bar_for_ordinal_scores(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = _ordinal()
    r = calibrate(ws, capsys, "--fail-under", "weighted_kappa=0.6", "spearman=0.7", rows=rows)
    assert r.code == 0, r.out
    assert [b["metric"] for b in r.report["bars"]] == ["weighted_kappa", "spearman"]
    assert r.report["agreement"] < 0.8  # exact agreement alone would have failed it
    lean = sum(x["judge"] - x["human"] for x in rows) / len(rows)
    assert f"On average the judge is lenient (scores above the human) by {lean:.2f} points." in r.out
    r = calibrate(ws, capsys, "--fail-under", "weighted_kappa=0.99", rows=rows)
    assert r.code == 1 and r.report["reasons"][0].startswith("weighted_kappa 0.")
    assert r.report["reasons"][0].endswith("< 0.99")


def test_fail_under_with_min_agreement_keeps_both_bars(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = calibrate(ws, capsys, "--min-agreement", "0.8", "--fail-under", "spearman=0.7", rows=_ordinal())
    assert r.code == 1
    assert [b["metric"] for b in r.report["bars"]] == ["agreement_ci95_lower", "spearman"]


def test_fail_under_is_repeatable(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = calibrate(ws, capsys, "--fail-under", "kappa=0.1", "--fail-under", "weighted_f1=0.1", rows=_ordinal())
    assert [b["metric"] for b in r.report["bars"]] == ["kappa", "weighted_f1"]


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("spearman=0.7", "--fail-under spearman: applies to ordinal (0..5) labels, and these human labels are binary"),
        ("mae=0.5", "--fail-under mae: mae is an error (lower is better), so a floor does not apply"),
        ("recall=0.5", "--fail-under recall: unknown metric"),
        ("kappa", "--fail-under 'kappa': write metric=value"),
        ("kappa=high", "'high' is not a number"),
    ],
)
def test_bad_fail_under_is_exit_2(ws: Path, capsys: pytest.CaptureFixture[str], arg: str, message: str) -> None:
    r = calibrate(ws, capsys, "--fail-under", arg, rows=_seed_rows(48, 50))
    assert r.code == 2 and message in r.err
    assert not (ws / ".ragjudge" / "calibration.json").exists()


def test_tpr_on_ordinal_labels_is_exit_2(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = calibrate(ws, capsys, "--fail-under", "tpr=0.5", rows=_ordinal())
    assert r.code == 2 and "applies to binary (0/1) labels, and these human labels are ordinal" in r.err


def test_an_undefined_metric_fails_its_bar(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"id": i, "human": 1, "judge": 1} for i in range(30)]
    r = calibrate(ws, capsys, "--fail-under", "tnr=0.5", rows=rows)
    assert r.code == 1 and r.report["reasons"] == ["tnr undefined: no human negatives: cannot show >= 0.5"]


# --- inputs, record, exit codes ------------------------------------------------------------------------


def test_the_record_is_written_for_the_configured_judge(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "ragjudge.yml").write_text(
        "judge:\n  provider: openai\n  model: gpt-4o-mini\n  api_key: sk-test-never-shown-1\n"
        "  calibration: calib/judge.json\n",
        encoding="utf-8",
    )
    r = calibrate(ws, capsys, "--config", "ragjudge.yml", rows=_seed_rows(48, 50))
    record = json.loads((ws / "calib" / "judge.json").read_text(encoding="utf-8"))
    digest = fingerprint_of(load_config(ws / "ragjudge.yml").judge).digest
    assert record["judge_fingerprint"] == r.report["judge_fingerprint"] == digest
    assert record["verdict"] == "fit" and record["n"] == 50 and record["components"]["model"] == "gpt-4o-mini"
    assert r.report["judge"] == {"provider": "openai", "model": "gpt-4o-mini", "base_url_host": "api.openai.com",
                                 "temperature": 0.0}  # fmt: skip
    assert "sk-test-never-shown-1" not in r.out + json.dumps(r.report) + json.dumps(record)
    assert f"fingerprint {digest[:12]}; record written to {ws / 'calib' / 'judge.json'}" in r.out


def test_a_bad_labels_file_is_exit_2_naming_the_line(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = calibrate(ws, capsys, rows=[{"id": 1, "human": 1, "judge": 1}, {"id": 2, "human": 9, "judge": 1}])
    assert r.code == 2
    assert r.err.startswith(f"ragjudge: error: {ws / 'labels.jsonl'}:2: field 'human': must be 0 or 1")
    assert "Tip: each line is" in r.err


def test_a_label_line_with_a_key_given_twice_is_exit_2_naming_the_file_the_line_and_the_key(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # json.loads would keep the second `human` (1) in silence, and the label would say the opposite of the first.
    labels = ws / "labels.jsonl"
    labels.write_text('{"id": "a", "human": 1, "judge": 1}\n{"id": "b", "human": 0, "judge": 1, "human": 1}\n')
    code = main(["calibrate", "--labels", str(labels), "--report", str(ws / "report.json")])
    assert code == 2
    assert capsys.readouterr().err == (
        f"ragjudge: error: {labels}:2: key 'human' is given twice in one object (a JSON reader keeps the last "
        "without a word)\nTip: give each key once\n"
    )
    assert not (ws / "report.json").exists()


def test_nothing_to_calibrate_is_exit_2(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = calibrate(ws, capsys)
    assert r.code == 2 and "nothing to calibrate" in r.err


@pytest.mark.parametrize("value", ["1.0", "0", "abc"])
def test_min_agreement_must_be_a_rate(ws: Path, capsys: pytest.CaptureFixture[str], value: str) -> None:
    assert calibrate(ws, capsys, "--min-agreement", value, rows=_seed_rows(48, 50)).code == 2


def test_ordinal_labels_without_scores_need_the_model_judge(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"id": 1, "human": 4, "question": "Q?", "answer": "A.", "contexts": ["c"]}, {"id": 2, "human": 1,
            "judge": 1}]  # fmt: skip
    r = calibrate(ws, capsys, rows=rows)
    assert r.code == 2 and "needs judge.provider: openai" in r.err


def test_labels_scored_by_the_model_judge_through_the_command(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAI(other_judges, api_key=KEY) as fake:
        _judge_config(ws, fake.base_url)
        rows = [
            {
                "id": i,
                "human": 1,
                "question": "Q?",
                "answer": f"Refunds take {i} days.",
                "contexts": [f"Refunds take {i} days."],
            }
            for i in range(20)
        ]
        log = ws / "calibrate.jsonl"
        r = calibrate(ws, capsys, "--config", "ragjudge.yml", "--log", str(log), rows=rows)
        assert fake.call_count == 20  # one call per label: the combined call the gate makes
        assert all(str(b["messages"][0]["content"]).startswith("You judge one answer") for b in fake.bodies)
    assert r.code == 0 and r.report["n"] == 20 and r.report["judged"] == 20
    assert r.report["faithfulness_rule"] == "faithfulness >= 0.8"
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 20 and {x["purpose"] for x in lines} == {"calibrate"}
    assert KEY not in log.read_text(encoding="utf-8")


def test_when_no_label_can_be_scored_it_is_exit_3(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"id": i, "human": 1, "question": "Q?", "answer": "Hi", "contexts": ["Refunds take 5 days."]}
            for i in range(3)]  # fmt: skip
    r = calibrate(ws, capsys, rows=rows)
    assert r.code == 3 and "no label could be scored by the judge (3 unscored)" in r.err
    assert r.out.count("unscored: ") == 3


# --- bias checks through the command ------------------------------------------------------------------


def _judge_config(folder: Path, base_url: str) -> None:
    config = {"judge": {"provider": "openai", "base_url": base_url, "api_key": KEY, "cache": None, "max_retries": 0}}
    (folder / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")


def _bias_items(folder: Path, count: int = 10) -> Path:
    markers = ["[S5]", "", "[S1]", "[S3]"]
    path = folder / "items.jsonl"
    rows = [
        {"id": k, "claim": f"Claim {k}", "passages": [passage(markers[(k + i) % 4], "refunds", i) for i in range(4)]}
        for k in range(count)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_position_biased_judge_is_unfit(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAI(evidence_responder(first_wins), api_key=KEY) as fake:
        _judge_config(ws, fake.base_url)
        r = calibrate(ws, capsys, "--config", "ragjudge.yml", "--position-bias", str(_bias_items(ws)))
    pb = r.report["position_bias"]
    assert r.code == 1 and r.report["verdict"] == "unfit" and pb["biased"] is True
    assert pb["upper95"] == pytest.approx(proportion_confint(pb["flips"], 40, method="wilson")[1], abs=1e-4)
    assert "position bias: " in r.out and "BIASED" in r.out
    assert r.report["n"] is None and not (ws / ".ragjudge" / "calibration.json").exists()


def test_an_unbiased_judge_passes_both_bias_checks(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAI(evidence_responder(by_marker), api_key=KEY) as fake:
        _judge_config(ws, fake.base_url)
        items = str(_bias_items(ws))
        r = calibrate(ws, capsys, "--config", "ragjudge.yml", "--position-bias", items, "--length-bias", items)
    assert r.code == 0 and r.report["verdict"] == "fit"
    assert r.report["position_bias"]["biased"] is False and r.report["length_bias"]["biased"] is False
    assert r.report["position_bias"]["flips"] == 0 and r.report["length_bias"]["rose"] == 0


def test_a_looser_flip_bar_can_be_set(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAI(evidence_responder(by_marker), api_key=KEY) as fake:
        _judge_config(ws, fake.base_url)
        items = str(_bias_items(ws, count=3))
        strict = calibrate(ws, capsys, "--config", "ragjudge.yml", "--position-bias", items)
        loose = calibrate(ws, capsys, "--config", "ragjudge.yml", "--position-bias", items, "--max-flip-rate", "0.3")
    assert strict.code == 1 and strict.report["position_bias"]["inconclusive"] is True
    assert loose.code == 0 and loose.report["position_bias"]["max_flip_rate"] == 0.3


def test_bias_checks_need_the_model_judge(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = calibrate(ws, capsys, "--position-bias", str(_bias_items(ws)))
    assert r.code == 2 and "needs judge.provider: openai" in r.err


def test_labels_and_bias_together_write_one_record(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAI(evidence_responder(first_wins), api_key=KEY) as fake:
        _judge_config(ws, fake.base_url)
        r = calibrate(ws, capsys, "--config", "ragjudge.yml", "--position-bias", str(_bias_items(ws)),
                      rows=_seed_rows(50, 50))  # fmt: skip
    record = json.loads((ws / ".ragjudge" / "calibration.json").read_text(encoding="utf-8"))
    assert r.code == 1 and record["verdict"] == "unfit"
    assert any(reason.startswith("position bias: ") for reason in record["reasons"])
    assert math.isclose(record["agreement"], 1.0)


# --- the team's criteria and the reference's points -----------------------------------------------

ORDER_HUMAN = [5, 4, 2, 1, 3, 5, 2, 4, 3, 1]
ORDER_JUDGE = [5, 3, 2, 2, 3, 4, 1, 4, 3, 1]
CRITERIA = {
    "asks_for_order": {"question": "Does it ask for the order number when it needs one?", "score_1": "never",
                       "score_5": "at once", "tags": ["orders"]},
    "polite": {"question": "Is it polite?", "score_1": "rude", "score_5": "courteous"},
}  # fmt: skip
LISTED = ["Refunds take 5 business days", "The original card is credited", "A receipt is needed"]


def _criteria_config(folder: Path, base_url: str, **judge: Any) -> None:
    config = {"judge": {"provider": "openai", "base_url": base_url, "api_key": KEY, "cache": None, "max_retries": 0,
                        "criteria": CRITERIA, **judge}}  # fmt: skip
    (folder / "ragjudge.yml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")


def _item(key: str, question: str, answer: str, **fields: Any) -> dict[str, Any]:
    return {"id": key, "human": 1, "question": question, "answer": answer, "contexts": [answer], **fields}


def _criteria_rows() -> tuple[list[dict[str, Any]], dict[str, Scripted]]:
    """Ten items scored on asks_for_order, one the judge cannot read, and three with reference verdicts."""
    rows, script = [], {}
    for i, (h, j) in enumerate(zip(ORDER_HUMAN, ORDER_JUDGE, strict=True)):
        rows.append(_item(f"c{i}", f"Where is order {i}?", f"Order {i} ships today.", criteria={"asks_for_order": h}))
        script[f"Where is order {i}?"] = Scripted(criteria={"asks_for_order": j, "polite": 5})
    rows[0]["criteria"]["polite"] = 5
    rows.append(_item("broken", "Broken?", "It ships.", criteria={"asks_for_order": 3}))
    script["Broken?"] = Scripted(broken=True)
    # The person: covered, covered, missing. The judge: covered, partial, missing (the second point a spacing apart).
    rows.append(_item("r1", "Refund time?", "Refunds take 5 business days and go back to the original card.",
                      expected=LISTED, reference_points=[{"point": LISTED[0], "verdict": "covered"},
                      {"point": "The original  card is credited", "verdict": "covered"},
                      {"point": LISTED[2], "verdict": "missing"}]))  # fmt: skip
    script["Refund time?"] = Scripted(points=[(LISTED[0], "covered", "Refunds take 5 business days"),
                                              (LISTED[1], "partial", "go back to the original card"),
                                              (LISTED[2], "missing", "")])  # fmt: skip
    # A reference text ragjudge splits: the judge drops a space, and errs on the second point.
    text = "退货需在签收后 7 天内申请。需提供订单号。"
    rows.append(_item("r2", "退货期限？", "签收后7天内可申请退货。", expected=text,
                      reference_points=[{"point": "退货需在签收后 7 天内申请", "verdict": "covered"},
                                        {"point": "需提供订单号", "verdict": "missing"}]))  # fmt: skip
    script["退货期限？"] = Scripted(points=[("退货需在签收后7天内申请", "covered", "签收后7天内可申请退货"),
                                          ("需提供订单号", "partial", "可申请退货")])  # fmt: skip
    rows.append(_item("r3", "Returns?", "Returns are accepted within 14 days.", expected=["Returns within 30 days"],
                      reference_points=[{"point": "Returns within 30 days", "verdict": "contradicted"}]))  # fmt: skip
    script["Returns?"] = Scripted(points=[("Returns within 30 days", "contradicted", "within 14 days")])
    return rows, script


def test_criteria_and_reference_agreement_through_the_command(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows, script = _criteria_rows()
    with FakeOpenAI(scripted_judge(script), api_key=KEY) as fake:
        _criteria_config(ws, fake.base_url)
        r = calibrate(ws, capsys, "--config", "ragjudge.yml", "--min-agreement", "0.7", rows=rows)
        # One call per item, the combined call the gate makes (and the retry of the reply that is not JSON).
        assert fake.call_count == len(rows) + 1
    assert r.code == 0, r.out + r.err
    c = r.report["criteria"]["asks_for_order"]
    h, j = ORDER_HUMAN, ORDER_JUDGE
    assert (c["n"], c["labelled"]) == (10, 11)
    assert c["agreement"] == pytest.approx(0.6) and c["ci95"] == pytest.approx(
        proportion_confint(6, 10, method="wilson"), abs=1e-12
    )
    assert c["kappa"] == pytest.approx(cohen_kappa_score(h, j), abs=1e-12)
    qwk = cohen_kappa_score(h, j, labels=[1, 2, 3, 4, 5], weights="quadratic")
    assert c["weighted_kappa"] == pytest.approx(qwk, abs=1e-12)
    assert c["mae"] == pytest.approx(0.4) and c["mean_error"] == pytest.approx(-0.2)
    assert c["spearman"] == pytest.approx(spearmanr(h, j).statistic, abs=1e-12)
    assert [u["id"] for u in c["unscored"]] == ["broken"]
    assert c["unscored"][0]["reason"].startswith("judge reply invalid after 2 attempts")
    assert r.report["criteria"]["polite"]["n"] == 1 and r.report["criteria"]["polite"]["agreement"] == 1.0
    p = r.report["reference"]
    human = ["covered", "covered", "missing", "covered", "missing", "contradicted"]
    judge = ["covered", "partial", "missing", "covered", "partial", "contradicted"]
    assert (p["n"], p["items"], p["agreed"]) == (6, 3, 4)
    assert p["ci95"] == pytest.approx(proportion_confint(4, 6, method="wilson"), abs=1e-12)
    assert p["kappa"] == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)
    assert {v: (a["n"], a["agreed"]) for v, a in p["by_verdict"].items()} == {
        "covered": (3, 2), "partial": (0, 0), "missing": (2, 1), "contradicted": (1, 1)
    }  # fmt: skip
    assert p["by_verdict"]["covered"]["ci95"] == pytest.approx(proportion_confint(2, 3, method="wilson"), abs=1e-12)
    assert p["confusion"]["covered"] == {"covered": 2, "partial": 1, "missing": 0, "contradicted": 0,
                                         "not_returned": 0}  # fmt: skip
    assert p["confusion"]["missing"] == {"covered": 0, "partial": 1, "missing": 1, "contradicted": 0,
                                         "not_returned": 0}  # fmt: skip
    assert p["not_returned"] == []  # every judge is given ragjudge's points, and must judge each
    lo, hi = c["ci95"]
    assert f"criteria.asks_for_order: agreement=0.600 ci95=[{lo:.3f}, {hi:.3f}] n=10" in r.out.splitlines()
    assert f"  kappa={c['kappa']:.3f} weighted_kappa={qwk:.3f} mae=0.400 mean_error=-0.200 " in r.out
    assert "  On average the judge is strict (scores below the human) by 0.20 points on this criterion." in r.out
    lo, hi = p["ci95"]
    assert f"reference: agreement=0.667 ci95=[{lo:.3f}, {hi:.3f}] n=6 points (3 items) kappa={p['kappa']:.3f}" in r.out
    assert "  the judge gave the human's verdict on: covered 2 of 3 (66.7%, " in r.out
    assert "not returned" not in r.out


def test_fail_under_a_criterion_and_the_points(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows, script = _criteria_rows()
    with FakeOpenAI(scripted_judge(script), api_key=KEY) as fake:
        _criteria_config(ws, fake.base_url)
        base = ("--config", "ragjudge.yml", "--min-agreement", "0.7", "--fail-under")
        passed = calibrate(ws, capsys, *base, "criteria.asks_for_order.weighted_kappa=0.8", "reference.agreement=0.6",
                           rows=rows)  # fmt: skip
        failed = calibrate(ws, capsys, *base, "criteria.asks_for_order.kappa=0.6",
                           "reference.contradicted.agreement=1", rows=rows)  # fmt: skip
    assert passed.code == 0, passed.out
    assert [b["metric"] for b in passed.report["bars"]] == [
        "agreement_ci95_lower", "criteria.asks_for_order.weighted_kappa", "reference.agreement"
    ]  # fmt: skip
    kappa = failed.report["criteria"]["asks_for_order"]["kappa"]
    assert kappa < 0.6
    assert failed.code == 1 and failed.report["verdict"] == "unfit"
    assert failed.report["reasons"] == [f"criteria.asks_for_order.kappa {kappa:.3f} < 0.6"]
    assert f"  ✗ criteria.asks_for_order.kappa {kappa:.3f} < 0.6" in failed.out
    assert "  ✓ reference.contradicted.agreement 1.000 >= 1" in failed.out
    record = json.loads((ws / ".ragjudge" / "calibration.json").read_text(encoding="utf-8"))
    assert record["verdict"] == "unfit" and record["reasons"] == failed.report["reasons"]


def test_a_bar_on_a_criterion_keeps_the_default_agreement_bar(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows, script = _criteria_rows()  # 13 of 14 labels scored, all agreeing: the lower bound is 0.772 < 0.8
    with FakeOpenAI(scripted_judge(script), api_key=KEY) as fake:
        _criteria_config(ws, fake.base_url)
        r = calibrate(ws, capsys, "--config", "ragjudge.yml", "--fail-under", "reference.agreement=0.5", rows=rows)
    assert r.code == 1 and [b["metric"] for b in r.report["bars"]] == ["agreement_ci95_lower", "reference.agreement"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"criteria": {"asks_for_order": 9}},
            "field 'criteria.asks_for_order': must be an integer score from 1 to 5 (got 9)",
        ),
        (
            {"criteria": {"asks_for_ordr": 3}},
            "field 'criteria.asks_for_ordr': no criterion named 'asks_for_ordr' "
            "(judge.criteria defines: asks_for_order, polite)",
        ),
        ({"expected": None}, "field 'expected': required with reference_points"),
        (
            {"reference_points": [{"point": "A receipt", "verdict": "missing"}]},
            "field 'reference_points.0.point': 'A receipt' is not one of the points listed in `expected`",
        ),
    ],
)
def test_a_bad_criteria_or_point_label_is_exit_2_naming_the_line(
    ws: Path, capsys: pytest.CaptureFixture[str], change: dict[str, Any], message: str
) -> None:
    rows, script = _criteria_rows()
    line = 12 if "expected" in change or "reference_points" in change else 2
    rows[line - 1].update(change)
    rows[line - 1] = {k: v for k, v in rows[line - 1].items() if v is not None}
    with FakeOpenAI(scripted_judge(script), api_key=KEY) as fake:
        _criteria_config(ws, fake.base_url)
        r = calibrate(ws, capsys, "--config", "ragjudge.yml", rows=rows)
        assert fake.call_count == 0
    assert r.code == 2
    assert r.err.startswith(f"ragjudge: error: {ws / 'labels.jsonl'}:{line}: {message}"), r.err
    assert not (ws / ".ragjudge" / "calibration.json").exists()


@pytest.mark.parametrize(
    ("judge", "fail_under", "message"),
    [
        ({"provider": "offline"}, (), "criteria labels need the model judge: the offline judge cannot score criteria"),
        ({"reference": False}, (), "reference_points labels need judge.reference: true"),
        ({}, ("criteria.polite.kappa=0.5",), None),
        ({}, ("criteria.tidy.kappa=0.5",), "--fail-under criteria.tidy.kappa: no line of "),
    ],
)
def test_what_cannot_be_calibrated_is_exit_2_before_any_call(
    ws: Path, capsys: pytest.CaptureFixture[str], judge: dict[str, Any], fail_under: tuple[str, ...],
    message: str | None,
) -> None:  # fmt: skip
    rows, script = _criteria_rows()
    with FakeOpenAI(scripted_judge(script), api_key=KEY) as fake:
        _criteria_config(ws, fake.base_url, **judge)
        args = ("--fail-under", *fail_under) if fail_under else ()
        r = calibrate(ws, capsys, "--config", "ragjudge.yml", *args, rows=rows)
        calls = fake.call_count
    if message is None:  # a bar on a criterion the lines score is fine
        assert r.code in (0, 1) and calls == len(rows) + 1
        return
    assert r.code == 2 and message in r.err and calls == 0, r.err
