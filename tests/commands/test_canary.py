"""`ragjudge canary` end to end: real loopback arms, exit codes through `ragjudge.cli.main`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.cli import main
from tests.canary.files import read_report, write_config, write_feedback, write_sample
from tests.endpoint.test_receiving import sse
from tests.fakes.arms import ArmServer, example_service, faithful_reply, unfaithful_reply
from tests.fakes.rag import closed_port_url
from tests.fakes.responder_server import Exchange, ResponderServer

# Per-request delays of the test arms. Two equally fast loopback arms are NOT a clearly healthy
# canary for a p95 ratio on 100 requests: on a busy 2-CPU machine scheduling jitter alone sometimes
# stretches the interval past 1.5 (the honest answer is then "inconclusive"). A canary clearly no
# slower than the stable version is one whose delay is a fraction of the stable one's.
CANARY_DELAY_S = 0.02
STABLE_DELAY_S = 0.08
SAMPLE = 100  # >= 72: enough for a distribution-free upper bound on a p95 at 95%


@dataclass
class Run:
    code: int
    out: str
    err: str
    report: dict[str, Any] | None
    comment: str | None


@dataclass
class Canary:
    """A canary setup in a temporary folder: config, sample and feedback files, and how to run it."""

    dir: Path
    capsys: pytest.CaptureFixture[str]

    def run(self, *argv: str, config: dict[str, Any] | None = None) -> Run:
        args = ["canary", "--report", str(self.dir / "report.json"), "--comment-file", str(self.dir / "comment.md")]
        if config is not None:
            args += ["--config", str(write_config(self.dir / "ragjudge.yml", config))]
        code = main([*args, *argv])
        captured = self.capsys.readouterr()
        report_path, comment_path = self.dir / "report.json", self.dir / "comment.md"
        return Run(
            code,
            captured.out,
            captured.err,
            read_report(report_path) if report_path.exists() else None,
            comment_path.read_text(encoding="utf-8") if comment_path.exists() else None,
        )

    def config(
        self, n: int = SAMPLE, feedback: tuple[tuple[int, int], tuple[int, int]] | None = None, **keys: Any
    ) -> dict[str, Any]:
        canary: dict[str, Any] = {"sample": str(write_sample(self.dir / "sample.yaml", n))}
        if feedback is not None:
            canary["feedback"] = {"file": str(write_feedback(self.dir / "feedback.json", *feedback))}
        canary.update(keys)
        return canary


@pytest.fixture
def canary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Canary:
    return Canary(tmp_path, capsys)


@pytest.fixture
def healthy() -> Iterator[tuple[ArmServer, ArmServer]]:
    """Treatment and control, both fully faithful; the treatment clearly no slower."""
    with ArmServer("treatment", delay_s=CANARY_DELAY_S) as t, ArmServer("control", delay_s=STABLE_DELAY_S) as c:
        yield t, c


EQUAL_FEEDBACK = ((150, 5000), (150, 5000))


def arms(t: ArmServer, c: ArmServer) -> list[str]:
    return ["--treatment", t.ask_url, "--control", c.ask_url]


# --------------------------------------------------------------------------- statistical mode


def test_clearly_healthy_canary_is_promoted(canary: Canary, healthy: tuple[ArmServer, ArmServer]) -> None:
    run = canary.run(*arms(*healthy), config=canary.config(feedback=EQUAL_FEEDBACK))

    assert run.code == 0, run.out + run.err
    report = run.report
    assert report is not None
    assert (report["schema_version"], report["kind"], report["verdict"]) == (1, "canary", "promote")
    assert set(report["metrics"]) == {"dislike_rate_ratio", "p95_latency_ratio", "p95_latency_ms", "faithfulness"}
    for name, metric in report["metrics"].items():
        assert metric["decision"] == "pass", (name, metric["reason"])
        assert set(metric) >= {"value", "ci", "op", "threshold", "decision", "reason", "treatment", "control", "n"}
        lo, hi = metric["ci"]
        assert lo <= metric["value"] <= hi
    assert report["metrics"]["dislike_rate_ratio"]["n"] == {"treatment": 5000, "control": 5000}
    assert report["metrics"]["p95_latency_ratio"]["n"] == {"treatment": SAMPLE, "control": SAMPLE}
    assert report["metrics"]["faithfulness"]["value"] == 1.0
    assert report["reasons"] and all(isinstance(r, str) for r in report["reasons"])
    treatment = report["arms"]["treatment"]
    assert (treatment["requests"], treatment["ok"], treatment["errors"]) == (SAMPLE, SAMPLE, 0)
    assert (treatment["dislikes"], treatment["responses"]) == (150, 5000)
    assert treatment["p95_latency_ms"] >= CANARY_DELAY_S * 1000
    assert len(treatment["cases"]) == SAMPLE and treatment["cases"][0]["id"] == "q-000"
    assert run.out.startswith("ragjudge canary: PROMOTE")

    comment = run.comment
    assert comment is not None
    assert comment.startswith("## ✅ ragjudge canary: PROMOTE")
    assert "| Metric | Treatment | Control | Interval | Threshold | Decision |" in comment
    assert comment.index("PROMOTE") < comment.index("| Metric")


def test_more_dislikes_rolls_back(canary: Canary, healthy: tuple[ArmServer, ArmServer]) -> None:
    run = canary.run(*arms(*healthy), config=canary.config(feedback=((60, 1000), (108, 3600))))

    assert run.code == 1, run.out + run.err
    assert run.report is not None
    assert run.report["verdict"] == "rollback"
    dislikes = run.report["metrics"]["dislike_rate_ratio"]
    assert dislikes["decision"] == "fail"
    # The issue's own example, to the digit.
    assert dislikes["reason"] == "dislike rate 6.0% vs 3.0% (ratio 2.00, 95% CI 1.47–2.72) exceeds 1.5x control"
    assert run.report["reasons"] == [dislikes["reason"]]  # nothing else failed
    assert run.comment is not None and run.comment.startswith("## ❌ ragjudge canary: ROLLBACK")
    assert "| <code>dislike\\_rate\\_ratio</code> | 6.0% | 3.0% | ratio 2.00 [1.47, 2.72] |" in run.comment


def test_slower_canary_rolls_back_on_latency(canary: Canary) -> None:
    # The bundled example RAG service as both arms; the treatment answers 60 ms later.
    with example_service(delay_s=0.06) as slow, example_service() as stable:
        config = canary.config(
            n=60, rules={"p95_latency_ratio": "<= 1.5", "p95_latency_ms": "<= 3000"}, min_requests=30
        )
        run = canary.run("--treatment", slow, "--control", stable, config=config)

    assert run.code == 1, run.out + run.err
    assert run.report is not None
    ratio = run.report["metrics"]["p95_latency_ratio"]
    assert ratio["decision"] == "fail"
    assert ratio["value"] > 1.5 and ratio["ci"][0] > 1.0
    assert ratio["treatment"] > ratio["control"] + 50
    assert ratio["reason"].startswith("p95 latency ") and ratio["reason"].endswith("exceeds 1.5x control")
    assert run.report["reasons"] == [ratio["reason"]]


def test_unfaithful_canary_rolls_back(canary: Canary) -> None:
    with (
        ArmServer("treatment", unfaithful_reply(), delay_s=CANARY_DELAY_S) as t,
        ArmServer("control", faithful_reply(), delay_s=STABLE_DELAY_S) as c,
    ):
        run = canary.run(*arms(t, c), config=canary.config(feedback=EQUAL_FEEDBACK))

    assert run.code == 1, run.out + run.err
    assert run.report is not None
    faith = run.report["metrics"]["faithfulness"]
    assert faith["decision"] == "fail"
    assert (faith["value"], faith["ci"], faith["control"]) == (0.5, [0.5, 0.5], 1.0)
    assert faith["reason"] == "faithfulness 0.500 (95% CI 0.500–0.500; control 1.000) is below 0.95"
    assert run.report["arms"]["control"]["faithfulness"] == 1.0
    assert run.report["verdict"] == "rollback"


def test_too_little_data_is_inconclusive(canary: Canary, healthy: tuple[ArmServer, ArmServer]) -> None:
    # Everything looks fine, but 20 requests and 120 responses per arm cannot show it.
    run = canary.run(*arms(*healthy), config=canary.config(n=20, feedback=((3, 120), (4, 120))))

    assert run.code == 4, run.out + run.err
    assert run.report is not None
    assert run.report["verdict"] == "inconclusive"
    assert {m["decision"] for m in run.report["metrics"].values()} == {"inconclusive"}
    assert run.report["metrics"]["dislike_rate_ratio"]["reason"] == (
        "dislike rate: too few responses (treatment 120, control 120; need 200 per arm)"
    )
    assert run.report["metrics"]["p95_latency_ms"]["reason"] == (
        "p95 latency: too few successful requests (treatment 20; need 50)"
    )
    assert len(run.report["reasons"]) == 4
    assert run.comment is not None and run.comment.startswith("## ⚠️ ragjudge canary: INCONCLUSIVE")
    assert "do not promote on this run" in run.comment
    # Each undecided rule says what would decide it.
    metrics = run.report["metrics"]
    assert metrics["dislike_rate_ratio"]["advice"] == (
        "120 rated responses on an arm < 200 needed (canary.min_responses): wait for at least 80 more, or lower "
        "canary.min_responses"
    )
    assert metrics["p95_latency_ms"]["advice"] == (
        "20 questions < 50 needed (canary.min_requests): add at least 30 questions to canary.sample, or decide on "
        "point estimates (canary.decision: point)"
    )
    assert "**To decide:**" in run.comment


def test_an_undecided_p95_says_how_many_questions_would_decide_it(
    canary: Canary, healthy: tuple[ArmServer, ArmServer]
) -> None:
    # The bundled sample's size: 43 questions, past canary.min_requests, short of the 72 a p95 bound needs.
    config = canary.config(n=43, rules={"p95_latency_ms": "<= 3000"}, min_requests=30)
    run = canary.run(*arms(*healthy), config=config)

    assert run.code == 4, run.out + run.err
    assert run.report is not None
    advice = run.report["metrics"]["p95_latency_ms"]["advice"]
    assert advice == (
        "43 questions < 72 needed for an upper bound on the p95 at 95% confidence: add at least 29 questions to "
        "canary.sample, or decide on point estimates (canary.decision: point)"
    )
    assert run.comment is not None
    assert "- <code>p95\\_latency\\_ms</code>: 43 questions &lt; 72 needed for an upper bound" in run.comment


def test_the_comment_names_both_versions_and_the_rule_that_decided(
    canary: Canary, healthy: tuple[ArmServer, ArmServer]
) -> None:
    run = canary.run(*arms(*healthy), config=canary.config(feedback=((60, 1000), (108, 3600))))

    assert run.code == 1 and run.comment is not None
    lines = run.comment.splitlines()
    assert lines[2].startswith("**Roll the canary back**: <code>dislike\\_rate\\_ratio</code> decided it (1 of ")
    t_url, c_url = (a.url.replace("_", "\\_") for a in healthy)
    assert any(line.startswith(f"Compared: the treatment <code>{t_url}") and c_url in line for line in lines)


def test_no_path_of_the_runner_in_the_comment(
    canary: Canary, healthy: tuple[ArmServer, ArmServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(canary.dir)  # the workspace, as on a runner
    run = canary.run(*arms(*healthy), config=canary.config(feedback=EQUAL_FEEDBACK))

    assert run.comment is not None
    assert str(canary.dir) not in run.comment
    assert "feedback: feedback file feedback.json" in run.comment and "report: report.json" in run.comment


def test_wide_interval_is_inconclusive_not_promote(canary: Canary, healthy: tuple[ArmServer, ArmServer]) -> None:
    # Enough responses for the guard, but 30 vs 30 dislikes in 1000 cannot rule out a 1.5x rise.
    config = canary.config(feedback=((30, 1000), (30, 1000)), rules={"dislike_rate_ratio": "<= 1.5"})
    run = canary.run(*arms(*healthy), config=config)

    assert run.code == 4, run.out + run.err
    assert healthy[0].journal == []  # a dislike-only canary sends no requests
    assert run.report is not None
    dislikes = run.report["metrics"]["dislike_rate_ratio"]
    assert dislikes["decision"] == "inconclusive"
    assert dislikes["ci"][1] > 1.5
    assert "may exceed 1.5x control" in dislikes["reason"]


def test_requests_alternate_between_arms(canary: Canary) -> None:
    journal: list[tuple[str, str]] = []
    config = canary.config(n=6, rules={"p95_latency_ratio": "<= 1.5"}, min_requests=1)
    path = write_config(canary.dir / "one-worker.yml", config, endpoint={"concurrency": 1, "retries": 0})
    with ArmServer("treatment", journal=journal) as t, ArmServer("control", journal=journal) as c:
        code = main(["canary", "--config", str(path), *arms(t, c)])
    assert code in (0, 1, 4)
    # With one worker the order is exactly treatment, control, treatment, ... question by question.
    assert [name for name, _ in journal] == ["treatment", "control"] * 6
    questions = [q for _, q in journal]
    assert questions[::2] == questions[1::2] == [f"How long does refund number {i} take?" for i in range(6)]


# --------------------------------------------------------------------------- point mode


def test_point_mode_gives_the_seeds_reasons(canary: Canary) -> None:
    with (
        ArmServer("treatment", unfaithful_reply(), delay_s=CANARY_DELAY_S) as t,
        ArmServer("control", faithful_reply(), delay_s=STABLE_DELAY_S) as c,
    ):
        config = canary.config(n=40, feedback=((46, 1000), (30, 1000)), decision="point")
        run = canary.run(*arms(t, c), config=config)

    assert run.code == 1, run.out + run.err
    assert run.report is not None
    assert run.report["decision"] == "point"
    assert run.report["reasons"] == [
        "dislike rate 0.046 exceeds 1.5x baseline",
        "online faithfulness 0.500 below threshold 0.95",
    ]
    assert run.report["metrics"]["dislike_rate_ratio"]["ci"] is None
    # 40 requests is under min_requests: a pass by the seed's rule is not enough to promote.
    assert run.report["metrics"]["p95_latency_ratio"]["decision"] == "inconclusive"


def test_point_mode_promotes_with_no_reasons(canary: Canary, healthy: tuple[ArmServer, ArmServer]) -> None:
    run = canary.run(*arms(*healthy), config=canary.config(feedback=((31, 1000), (30, 1000)), decision="point"))

    assert run.code == 0, run.out + run.err
    assert run.report is not None
    assert (run.report["verdict"], run.report["reasons"]) == ("promote", [])
    p95 = run.report["metrics"]["p95_latency_ms"]
    assert p95["value"] == int(p95["value"])  # whole milliseconds, like the seed's Date.now() timings


# --------------------------------------------------------------------------- exit 2 and 3


def test_urls_come_from_the_config(
    canary: Canary, healthy: tuple[ArmServer, ArmServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    t, c = healthy
    monkeypatch.setenv("CANARY_URL", t.ask_url)
    monkeypatch.setenv("STABLE_URL", c.ask_url)
    config = canary.config(
        n=10, treatment="${CANARY_URL}", control="${STABLE_URL}", rules={"faithfulness": ">= 0.9"}, min_requests=10
    )
    run = canary.run(config=config)
    assert run.code == 0, run.out + run.err
    assert run.report is not None
    # A URL substituted from the environment is a secret (it may carry a token): masked like one.
    assert run.report["arms"]["treatment"]["url"] == "***"
    assert t.ask_url not in run.out + run.err + json.dumps(run.report)


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"sample": None}, "canary.sample is not set"),
        ({"rules": {"error_rate": "<= 0.1"}}, "canary.rules.error_rate: unknown canary metric"),
        ({"rules": {"faithfulness": "<= 0.95"}}, "canary.rules.faithfulness: must be a lower limit"),
        ({"rules": {"p95_latency_ms": "about 3000"}}, "canary.rules.p95_latency_ms: cannot parse rule"),
        ({"rules": {}}, "canary.rules: no rules"),
        ({"decision": "vibes"}, "canary.decision"),
        ({"feedback": None}, "the dislike_rate_ratio rule needs production feedback counts"),
        (
            {"feedback": {"file": "a.json", "url": "http://127.0.0.1:9/x"}},
            "give exactly one of file, url or prometheus",
        ),
    ],
)
def test_bad_config_exits_2(
    canary: Canary, healthy: tuple[ArmServer, ArmServer], keys: dict[str, Any], message: str
) -> None:
    config = canary.config(feedback=EQUAL_FEEDBACK)
    for key, value in keys.items():
        if value is None:
            config.pop(key)
        else:
            config[key] = value
    run = canary.run(*arms(*healthy), config=config)
    assert run.code == 2, run.out + run.err
    assert message in run.err
    assert "Traceback" not in run.err
    assert run.report is None
    assert healthy[0].journal == [] and healthy[1].journal == []  # nothing was sent


def test_missing_url_exits_2(canary: Canary, healthy: tuple[ArmServer, ArmServer]) -> None:
    run = canary.run("--treatment", healthy[0].ask_url, config=canary.config(feedback=EQUAL_FEEDBACK))
    assert run.code == 2
    assert "no control URL" in run.err and "--control URL" in run.err


def test_unreachable_treatment_exits_3_with_a_report(canary: Canary, healthy: tuple[ArmServer, ArmServer]) -> None:
    dead = closed_port_url()
    run = canary.run(
        "--treatment", dead, "--control", healthy[1].ask_url, config=canary.config(n=5, feedback=EQUAL_FEEDBACK)
    )

    assert run.code == 3, run.out + run.err
    assert run.report is not None
    assert run.report["verdict"] == "inconclusive"
    assert run.report["reasons"][0].startswith(
        "every request to the treatment failed (endpoint error: connection refused"
    )
    assert run.report["arms"]["treatment"]["ok"] == 0 and run.report["arms"]["treatment"]["errors"] == 5
    assert any(w.startswith("treatment: 5 of 5 requests failed") for w in run.report["warnings"])


def test_comment_keeps_untrusted_text_inert(canary: Canary, healthy: tuple[ArmServer, ArmServer]) -> None:
    # A case id from the sample file reaches the comment through a duplicate-question warning.
    hostile = "@octocat <img src=x onerror=alert(1)> | `{{ 7*7 }}` </details>"
    sample = canary.dir / "sample.yaml"
    sample.write_text(
        yaml.safe_dump(
            [
                {"id": "q-1", "question": "How long do refunds take?"},
                {"id": hostile, "question": "How long do refunds take"},
            ]
        ),
        encoding="utf-8",
    )
    config = {"sample": str(sample), "rules": {"faithfulness": ">= 0.9"}, "min_requests": 1}
    run = canary.run(*arms(*healthy), config=config)

    assert run.code == 0, run.out + run.err
    assert run.comment is not None
    warning = next(line for line in run.comment.splitlines() if "duplicates the question" in line)
    assert "@\u200boctocat" in warning and "@octocat" not in warning
    assert "&lt;img" in warning and "<img" not in warning and "</details>" not in warning
    assert "\\|" in warning
    # Its backtick-quoted part reads as code, as ragjudge's own quoted commands do: escaped, shown, not evaluated.
    assert "<code>{{ 7*7 }}</code>" in warning and "49" not in warning


# --------------------------------------------------------------------------- --inconclusive-exit


@pytest.mark.parametrize(
    ("flag", "code"), [([], 4), (["--inconclusive-exit", "0"], 0), (["--inconclusive-exit", "9"], 9)]
)
def test_inconclusive_exit_replaces_only_the_4(canary: Canary, flag: list[str], code: int) -> None:
    # Dislike counts only (no requests): 120 responses per arm are too few to decide.
    config = canary.config(feedback=((3, 120), (4, 120)), rules={"dislike_rate_ratio": "<= 1.5"})
    run = canary.run(*flag, config=config)
    assert run.code == code, run.out + run.err
    assert run.report is not None and run.report["verdict"] == "inconclusive"
    assert run.out.startswith("ragjudge canary: INCONCLUSIVE")


def test_inconclusive_exit_leaves_rollback_alone(canary: Canary) -> None:
    config = canary.config(feedback=((120, 2000), (60, 2000)), rules={"dislike_rate_ratio": "<= 1.5"})
    assert canary.run("--inconclusive-exit", "0", config=config).code == 1


@pytest.mark.parametrize(
    ("value", "message"), [("256", "an exit code is 0 to 255, not 256"), ("x", "not a whole number: 'x'")]
)
def test_inconclusive_exit_must_be_an_exit_code(canary: Canary, value: str, message: str) -> None:
    run = canary.run("--inconclusive-exit", value)
    assert run.code == 2
    assert f"argument --inconclusive-exit: {message}" in run.err


# --------------------------------------------------------------------------- time to the first token


def _slow_first_token(ex: Exchange) -> None:
    """All of the answer late, at once: 150 ms to the first token, and done then."""
    ex.stream([0.15, sse({"delta": "Refunds are issued "}), sse({"delta": "within 3 business days."})])


def _quick_first_token(ex: Exchange) -> None:
    """The first token at once, the rest 200 ms later: slower overall, quicker to start."""
    ex.stream([sse({"delta": "Refunds are issued "}), 0.2, sse({"delta": "within 3 business days."})])


@pytest.mark.parametrize("decision", ["statistical", "point"])
def test_a_canary_slow_to_its_first_token_but_not_overall_is_rolled_back_by_the_ttft_rule(
    canary: Canary, decision: str
) -> None:
    rules = {"p95_latency_ratio": "<= 1.5", "p95_latency_ms": "<= 3000", "p95_ttft_ms": "<= 100"}
    config = canary.config(n=80, rules=rules, decision=decision)
    endpoint = {"retries": 0, "concurrency": 16, "timeout_s": 10, "response": {"answer_delta": "delta"}}
    path = write_config(canary.dir / "stream.yml", config, endpoint=endpoint)
    with ResponderServer(_slow_first_token) as t, ResponderServer(_quick_first_token) as c:
        run = canary.run("--config", str(path), "--treatment", t.url, "--control", c.url)
    assert run.code == 1, run.out + run.err
    report = run.report
    assert report is not None and report["verdict"] == "rollback"
    decisions = {name: m["decision"] for name, m in report["metrics"].items()}
    assert decisions == {"p95_latency_ratio": "pass", "p95_latency_ms": "pass", "p95_ttft_ms": "fail"}
    ttft = report["metrics"]["p95_ttft_ms"]
    assert ttft["n"] == {"treatment": 80, "control": 80}
    assert 150 <= ttft["treatment"] < 400 and ttft["control"] < 100
    (reason,) = report["reasons"]
    if decision == "point":
        assert re.fullmatch(r"P95 TTFT \d+ms over budget", reason), reason
    else:
        assert re.fullmatch(r"p95 TTFT \d+ ms \(95% CI \d+–\d+ ms\) exceeds 100 ms", reason), reason
    arm = report["arms"]["treatment"]
    assert arm["p95_ttft_ms"] == pytest.approx(ttft["treatment"], abs=1)
    assert arm["cases"][0]["ttft_ms"] >= 150
    assert run.comment is not None
    (row,) = [line for line in run.comment.splitlines() if line.startswith("| <code>p95\\_ttft\\_ms</code>")]
    assert row.endswith("| &lt;= 100 ms | ❌ fail |"), row


def test_an_unknown_canary_metric_lists_the_ttft_rules(canary: Canary) -> None:
    run = canary.run(config=canary.config(rules={"ttft_p95": "<= 100"}))
    assert run.code == 2
    assert run.err.splitlines() == [
        "ragjudge: error: canary.rules.ttft_p95: unknown canary metric 'ttft_p95'",
        "Tip: canary metrics are: dislike_rate_ratio, p95_latency_ratio, p95_latency_ms, p95_ttft_ratio, "
        "p95_ttft_ms, faithfulness",
    ]


def test_a_judge_bug_is_never_promoted_past(
    canary: Canary, healthy: tuple[ArmServer, ArmServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 40 item 8: an exception inside ragjudge's judge was an "unscored" warning and the canary promoted;
    # the gate makes it an error (exit 3), and so does the canary now.
    from ragjudge.judge.offline import OfflineJudge

    judge = OfflineJudge.judge

    def judge_or_raise(self: OfflineJudge, case: Any, trace: Any, log: Any) -> Any:
        if case.id == "q-003":
            raise KeyError("scores")
        return judge(self, case, trace, log)

    monkeypatch.setattr(OfflineJudge, "judge", judge_or_raise)
    run = canary.run(*arms(*healthy), config=canary.config(feedback=EQUAL_FEEDBACK))
    assert run.code == 3, run.out + run.err
    assert run.report is not None and run.report["verdict"] == "inconclusive"
    assert run.report["reasons"][0] == (
        f"the judge failed inside ragjudge on 2 of {2 * SAMPLE} answers: the canary cannot be promoted; the first, "
        "treatment case 'q-003': judge failed inside ragjudge: KeyError: 'scores' (a bug in ragjudge, not in the "
        "service: rerun with RAGJUDGE_DEBUG=1 for a traceback, and report it)"
    )
