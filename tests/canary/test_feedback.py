"""Feedback counts from a file and over HTTP: good counts reach the decision, bad ones never promote."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragjudge.canary.feedback import ArmFeedback, from_file, from_url, parse_payload
from ragjudge.cli import main
from ragjudge.errors import EvaluationError, FeedbackError
from tests.canary.files import read_report, write_config
from tests.fakes._http import Incoming, LoopbackServer, Outgoing

GOOD = {"treatment": {"dislikes": 31, "responses": 1000}, "control": {"dislikes": 30, "responses": 1000}}
DISLIKES_ONLY = {"dislike_rate_ratio": "<= 1.5"}  # no sample run: these tests are about the counts


class FeedbackServer(LoopbackServer):
    """Serves one JSON body (or status) at any path, and records the requests."""

    def __init__(self, body: Any = None, status: int = 200) -> None:
        super().__init__()
        self.body = body if body is not None else GOOD
        self.status = status
        self.seen: list[Incoming] = []

    def handle(self, req: Incoming) -> Outgoing:
        self.seen.append(req)
        return Outgoing(self.status, self.body)


@pytest.fixture
def feedback_server() -> Iterator[FeedbackServer]:
    with FeedbackServer() as server:
        yield server


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- parsing and validation


def test_good_file(tmp_path: Path) -> None:
    feedback = from_file(write_json(tmp_path / "fb.json", {**GOOD, "window": "24h"}))
    assert feedback.treatment == ArmFeedback(31, 1000) and feedback.control == ArmFeedback(30, 1000)
    assert feedback.treatment.rate == 0.031
    assert feedback.source == f"feedback file {tmp_path / 'fb.json'}"
    assert feedback.missing == ()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"treatment": GOOD["treatment"]}, "no counts for the control arm"),
        ({"control": GOOD["control"]}, "no counts for the treatment arm"),
        ({**GOOD, "treatment": {"dislikes": -1, "responses": 1000}}, "treatment: dislikes is negative (-1)"),
        ({**GOOD, "control": {"dislikes": 0, "responses": -5}}, "control: responses is negative (-5)"),
        (
            {**GOOD, "control": {"dislikes": 12, "responses": 10}},
            "control: 12 dislikes out of 10 responses (dislikes cannot exceed responses)",
        ),
        (
            {**GOOD, "treatment": {"dislikes": 3.5, "responses": 10}},
            "treatment.dislikes: Input should be a valid integer, got a number with a fractional part",
        ),
        ({**GOOD, "treatment": {"dislikes": 3}}, "treatment.responses: Field required"),
        ([1, 2], "expected a JSON object with `treatment` and `control`, got list"),
    ],
)
def test_bad_counts_name_the_source_and_arm(data: Any, message: str) -> None:
    with pytest.raises(FeedbackError) as info:
        parse_payload(data, "feedback file fb.json")
    assert info.value.message == f"feedback file fb.json: {message}"
    assert info.value.exit_code == 2


def test_not_json_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FeedbackError, match="not valid JSON"):
        from_file(write_json(tmp_path / "fb.json", "{nope"))
    with pytest.raises(FeedbackError, match=r"fb2\.json: not found"):
        from_file(tmp_path / "fb2.json")


def test_a_feedback_file_that_is_a_device_or_huge_is_refused_at_once(tmp_path: Path) -> None:
    # Issue 40: `canary.feedback.file: /dev/zero` (the config is a PR's to edit) was read forever.
    with pytest.raises(FeedbackError) as caught:
        from_file(Path("/dev/zero"))
    assert caught.value.message == "feedback file /dev/zero: refused: a device, not a file"
    (tmp_path / "big.json").write_text(" " * 1_000_001, encoding="utf-8")
    with pytest.raises(FeedbackError) as caught:
        from_file(tmp_path / "big.json")
    assert (
        caught.value.message
        == f"feedback file {tmp_path / 'big.json'}: over 1,000,000 bytes, more than two arms' counts"
    )


# --------------------------------------------------------------------------- through the command


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], canary: dict[str, Any], *argv: str) -> tuple[int, str]:
    config = write_config(tmp_path / "ragjudge.yml", {"rules": DISLIKES_ONLY, **canary})
    code = main(["canary", "--config", str(config), "--report", str(tmp_path / "r.json"), *argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"treatment": GOOD["treatment"]}, "no counts for the control arm"),
        ({**GOOD, "treatment": {"dislikes": -3, "responses": 1000}}, "treatment: dislikes is negative (-3)"),
        (
            {**GOOD, "treatment": {"dislikes": 1001, "responses": 1000}},
            "treatment: 1001 dislikes out of 1000 responses",
        ),
    ],
)
def test_bad_feedback_file_exits_2_and_never_promotes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: Any, message: str
) -> None:
    path = write_json(tmp_path / "fb.json", data)
    code, output = run(tmp_path, capsys, {}, "--feedback", str(path))
    assert code == 2
    assert f"ragjudge: error: feedback file {path}: {message}" in output
    assert "Tip:" in output
    assert not (tmp_path / "r.json").exists()


def test_feedback_flag_overrides_the_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write_json(tmp_path / "bad.json", {"treatment": GOOD["treatment"]})
    good = write_json(
        tmp_path / "good.json", {"treatment": {"dislikes": 120, "responses": 2000}, "control": GOOD["control"]}
    )
    code, output = run(tmp_path, capsys, {"feedback": {"file": str(bad)}}, "--feedback", str(good))
    assert code == 1, output
    report = read_report(tmp_path / "r.json")
    assert report["arms"]["treatment"]["dislikes"] == 120
    assert report["feedback_source"] == f"feedback file {good}"
    assert report["arms"]["treatment"]["requests"] == 0  # dislike-only: no sample was run


def test_relative_feedback_file_resolves_against_the_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_json(tmp_path / "fb.json", {"treatment": {"dislikes": 30, "responses": 5000}, "control": GOOD["control"]})
    code, output = run(tmp_path, capsys, {"feedback": {"file": "fb.json"}})
    assert code == 0, output  # 0.6% vs 3.0%: clearly not worse
    assert read_report(tmp_path / "r.json")["verdict"] == "promote"


def test_url_source_sends_headers_and_keeps_the_token_out_of_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], feedback_server: FeedbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("METRICS_TOKEN", "s3cret-token-123")
    feedback_server.body = {
        "treatment": {"dislikes": 120, "responses": 2000},
        "control": {"dislikes": 60, "responses": 2000},
    }
    canary = {
        "feedback": {
            "url": f"{feedback_server.url}/canary.json?key=s3cret-token-123",
            "headers": {"Authorization": "Bearer ${METRICS_TOKEN}"},
        }
    }
    code, output = run(tmp_path, capsys, canary)
    assert code == 1, output
    assert feedback_server.seen[0].headers["authorization"] == "Bearer s3cret-token-123"
    assert feedback_server.seen[0].path == "/canary.json"
    text = (tmp_path / "r.json").read_text(encoding="utf-8")
    assert "s3cret-token-123" not in text and "s3cret-token-123" not in output
    assert json.loads(text)["feedback_source"] == f"feedback url {feedback_server.url}/canary.json"


def test_url_source_bad_payload_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], feedback_server: FeedbackServer
) -> None:
    feedback_server.body = {"treatment": {"dislikes": 5, "responses": 1}, "control": GOOD["control"]}
    code, output = run(tmp_path, capsys, {"feedback": {"url": f"{feedback_server.url}/fb"}})
    assert code == 2
    assert f"feedback url {feedback_server.url}/fb: treatment: 5 dislikes out of 1 responses" in output


def test_url_source_http_error_is_could_not_evaluate(feedback_server: FeedbackServer) -> None:
    feedback_server.status, feedback_server.body = 503, {"error": "down"}
    with pytest.raises(EvaluationError, match=r"feedback url .*/fb: HTTP 503"):
        from_url(f"{feedback_server.url}/fb", {})


def test_url_source_unreachable_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.fakes.rag import closed_port_url

    code, output = run(tmp_path, capsys, {"feedback": {"url": closed_port_url()}})
    assert code == 3
    assert "cannot fetch the feedback counts (ConnectionError)" in output


def test_a_redirect_is_not_followed_so_the_feedback_headers_stay_home() -> None:
    from tests.fakes.responder_server import Exchange, ResponderServer

    seen: list[dict[str, str]] = []

    def elsewhere(ex: Exchange) -> None:
        seen.append(dict(ex.request.headers))
        ex.json(GOOD)

    with (
        ResponderServer(elsewhere) as other,
        ResponderServer(lambda ex: ex.send(302, b"", None, {"Location": f"{other.url}/fb"})) as home,
        pytest.raises(EvaluationError) as caught,
    ):
        from_url(f"{home.url}/fb", {"X-Api-Key": "fb-secret-123"})
    assert caught.value.message == (
        f"feedback url {home.url}/fb: HTTP 302, a redirect (not followed: it would take the feedback headers with it)"
    )
    assert seen == []
