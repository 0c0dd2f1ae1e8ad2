"""The comment's `Reproduce:` line, run as printed in the Action's workspace, asks the service the run asked.

Main's service (the config's `${RAG_URL}`) answers the refund question right; the PR's preview deployment (the
Action's `endpoint:` input) has its refund document edited as a PR would (card refunds in 7-10 business days,
not 3-5). The line printed for `cs-003` must reach the PR's service, not main's.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import re
import shlex
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragjudge import cli
from tests.fakes.github_server import FakeGitHub
from tests.github.runner import ActionRunner

PR = 7
EXAMPLES = Path(importlib.import_module("ragjudge.examples.rag_service").__file__ or "").parent


@pytest.fixture
def pr_service_url(tmp_path: Path) -> Iterator[str]:
    """The example service with the PR's edit to the refund document."""
    service = importlib.import_module("ragjudge.examples.rag_service")
    docs = json.loads((EXAMPLES / "corpus" / "docs.json").read_text(encoding="utf-8"))
    edited = [
        {**d, "text": d["text"].replace("Credit card refunds take 3-5", "Credit card refunds take 7-10")} for d in docs
    ]
    assert edited != docs
    corpus = tmp_path / "pr-docs.json"
    corpus.write_text(json.dumps(edited), encoding="utf-8")
    server = service.make_server(corpus=corpus)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/ask"
    finally:
        server.shutdown()
        server.server_close()


def _comment(gh: FakeGitHub) -> str:
    [body] = [str(c["body"]) for c in gh.comments.get(PR, [])]
    return body


def _probe(line: str, environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """Run the printed line as a shell would: `"$VAR"` expanded from `environ`, then the CLI in-process."""
    words = [re.sub(r"^\$(\w+)$", lambda m: environ[m.group(1)], w) for w in shlex.split(line)]
    assert words[:2] == ["ragjudge", "probe"]
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(words[1:])
    return code, out.getvalue()


def _repro(comment: str, case_id: str) -> str:
    lines = [m.group(1) for m in re.finditer(r"^Reproduce: <code>(.*)</code>$", comment, re.M)]
    found = {ln for ln in lines if ln.endswith(f"--case {case_id}")}
    assert len(found) == 1  # printed once for its cause and once in its details: the same line
    return found.pop().replace("\\_", "_")  # `inline`'s Markdown escapes, as GitHub renders them


def test_the_repro_line_reaches_the_prs_endpoint_not_mains(
    runner: ActionRunner,
    fake_github: FakeGitHub,
    example_rag_url: str,
    pr_service_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = runner.run(config="fail.yml", endpoint=pr_service_url)
    assert run.code == 1

    line = _repro(_comment(fake_github), "cs-003")
    assert line == f"ragjudge probe --config fail.yml --endpoint {pr_service_url} --cases cases/all.yaml --case cs-003"
    # Run in the workspace, where RAG_URL is still main's service: the PR's answer comes back.
    code, out = _probe(line, {"RAG_URL": example_rag_url}, monkeypatch)
    assert code == 0
    assert "Credit card refunds take 7-10 business days" in out
    assert "3-5 business days to appear on your statement" not in out


def test_a_secret_endpoint_is_named_by_the_variable_that_holds_it(
    runner: ActionRunner,
    fake_github: FakeGitHub,
    example_rag_url: str,
    pr_service_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The config reads the PR's URL from ${RAG_URL}: a secret, masked in every output, so the line names it.
    runner.env["RAG_URL"] = pr_service_url
    run = runner.run(config="fail.yml")
    assert run.code == 1

    comment = _comment(fake_github)
    assert pr_service_url not in comment
    line = _repro(comment, "cs-003")
    assert line == 'ragjudge probe --config fail.yml --endpoint "$RAG_URL" --cases cases/all.yaml --case cs-003'
    code, out = _probe(line, {"RAG_URL": pr_service_url}, monkeypatch)
    assert code == 0 and "Credit card refunds take 7-10 business days" in out
