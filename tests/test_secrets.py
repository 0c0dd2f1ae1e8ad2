"""No secret out (issue 11): config values from the environment, the judge key and the GitHub token are masked
wherever text leaves the process, also JSON-escaped, and never forwarded to a judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ragjudge.cli import main
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.rag import RagServer, answer
from tests.judge.openai_helpers import claims_json, kind_of, rubric_json

URL_KEY = "urlkey-7f3a9c"
BODY_KEY = "bodykey-51e0b2"
HEADER_KEY = 'hdr"key\\q-884'
JUDGE_KEY = "sk-judge-2b7c11d0"


def _config(tmp_path: Path, url: str, question: str, judge: dict[str, object] | None = None) -> None:
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump([{"id": "c1", "question": question}]), encoding="utf-8")
    config = {
        "endpoint": {
            "url": url + "?key=${URL_KEY}",
            "body": '{"question": {{ question | tojson }}, "key": "${BODY_KEY}"}',
            "headers": {"X-Api-Key": "${HEADER_KEY}"},
            "retries": 0,
            "timeout_s": 5,
        },
        "judge": judge or {"provider": "offline"},
        "cases": ["cases.yaml"],
        "gate": {"case": {"context_recall": ">= 1.0"}, "suite": {"pass_rate": ">= 1.0"}},
    }
    (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("URL_KEY", URL_KEY)
    monkeypatch.setenv("BODY_KEY", BODY_KEY)
    monkeypatch.setenv("HEADER_KEY", HEADER_KEY)
    monkeypatch.setenv("JUDGE_KEY", JUDGE_KEY)
    return tmp_path


def _forms(secret: str) -> list[str]:
    return [secret, json.dumps(secret)[1:-1]]


def test_values_from_the_environment_in_url_body_and_headers_are_masked_everywhere(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Reproduces the probe: `${VAR}` in endpoint.url or endpoint.body was not masked in the report, and a
    # header value holding `"` or `\` was missed in the log (its JSON-escaped form).
    echoed = f"Your keys are {URL_KEY}, {BODY_KEY} and {HEADER_KEY}."
    with RagServer({}, default=answer(echoed, ["p1"], {"p1": echoed})) as rag:
        _config(env, rag.url, "what are my keys?")
        code = main(["run", "--report", "r.json", "--comment-file", "c.md", "--log", "l.jsonl"])
        seen = rag.seen
    out, err = capsys.readouterr()
    assert code == 0
    # The keys really were sent: masking is on the way out, not on the way to the endpoint.
    assert seen[0].path == "/ask" and seen[0].headers["x-api-key"] == HEADER_KEY
    assert json.loads(seen[0].body)["key"] == BODY_KEY
    report = (env / "r.json").read_text(encoding="utf-8")
    assert json.loads(report)["cases"][0]["trace"]["answer"] == "Your keys are ***, *** and ***."
    outputs = [out, err, report, (env / "c.md").read_text(encoding="utf-8"), (env / "l.jsonl").read_text("utf-8")]
    for text in outputs:
        for secret in (URL_KEY, BODY_KEY, HEADER_KEY):
            for form in _forms(secret):
                assert form not in text


def test_a_secret_echoed_by_the_endpoint_is_not_forwarded_to_the_judge(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    echoed = f"The key is {BODY_KEY}. Refunds take 5 days."

    def judge(body: dict[str, object], index: int) -> Reply:
        if kind_of(body) == "faithfulness":
            return Reply(content=claims_json())
        return Reply(content=rubric_json())

    reply = answer(echoed, ["p1"], {"p1": f"{URL_KEY} refunds take 5 days"})
    with RagServer({}, default=reply) as rag, FakeOpenAI(judge) as fake:
        judge_cfg = {"provider": "openai", "base_url": fake.base_url, "api_key": "${JUDGE_KEY}", "cache": None}
        _config(env, rag.url, "how long do refunds take?", judge_cfg)
        code = main(["run", "--report", "r.json", "--log", "l.jsonl"])
        sent = json.dumps(fake.bodies)
        auth = {r["headers"]["authorization"] for r in fake.requests}
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert sent and "The key is ***." in sent and "*** refunds take 5 days" in sent
    assert BODY_KEY not in sent and URL_KEY not in sent
    assert auth == {f"Bearer {JUDGE_KEY}"}  # the judge still gets its own key, in the header only
    for text in (out, err, (env / "r.json").read_text("utf-8"), (env / "l.jsonl").read_text("utf-8")):
        assert JUDGE_KEY not in text and BODY_KEY not in text


def test_the_github_token_is_masked_on_stdout_and_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    token = "ghp_0123456789abcdefTOKEN"
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.chdir(tmp_path)
    # A case id is printed in the summary line of a failing case: here it happens to hold the token.
    (tmp_path / "cases.yaml").write_text(f"- {{id: {token}, question: 'q?'}}\n", encoding="utf-8")
    code = main(["run", "--endpoint", "http://127.0.0.1:9/ask", "--cases", "cases.yaml"])
    out, err = capsys.readouterr()
    assert code == 3
    assert "  *** error: endpoint error: connection refused by 127.0.0.1:9 after 3 attempts" in out
    assert token not in out + err


def test_a_judge_key_from_judge_api_key_env_is_masked(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MY_JUDGE_KEY", JUDGE_KEY)
    with RagServer({}, default=answer(f"echo {JUDGE_KEY}", ["p1"], {"p1": "x"})) as rag:
        _config(env, rag.url, "q?")
        main(["run", "--report", "r.json", "--judge-api-key-env", "MY_JUDGE_KEY"])
    out, err = capsys.readouterr()
    report = (env / "r.json").read_text("utf-8")
    assert "echo ***" in report
    assert JUDGE_KEY not in out + err + report
