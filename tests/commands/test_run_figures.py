"""One pass_rate per run, written the same in every output; main's figure and a figure over the shared cases say
what they are (issue 39: the 3-failure run printed 0.97, 0.925, 0.93 and 0.974 -> 0.949, none labelled).

Main ran 39 of the example cases (cs-014 failing: 0.974); the PR adds cs-020 (failing) and edits the refund
document so cs-003 regresses: 37 of 40 pass, 0.925.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from ragjudge import cli
from ragjudge.cases.files import read_items

service = importlib.import_module("ragjudge.examples.rag_service")
EXAMPLES = Path(service.__file__ or "").parent
MAIN_SHA = "feedbee" + "0" * 33


@dataclass
class Outputs:
    stdout: str
    comment: str
    html: str
    junit: str


def _serve(corpus: Path | None) -> tuple[object, str]:
    server = service.make_server(corpus=corpus)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/ask"


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(argv)
    return code, out.getvalue()


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outputs]:
    ws = tmp_path_factory.mktemp("figures")
    cases = [i.data for i in read_items(EXAMPLES / "cases" / "anchors.yaml")]
    main_cases = [c for c in cases if c["id"] not in ("cs-020", "cs-026", "cs-031", "cs-043")]
    (ws / "cases").mkdir()
    (ws / "cases" / "main.yaml").write_text(yaml.safe_dump(main_cases, allow_unicode=True), encoding="utf-8")
    pr_cases = [*main_cases, next(c for c in cases if c["id"] == "cs-020")]
    (ws / "cases" / "anchors.yaml").write_text(yaml.safe_dump(pr_cases, allow_unicode=True), encoding="utf-8")
    (ws / "ragjudge.yml").write_text(
        "endpoint: {url: '${RAG_URL}', timeout_s: 10}\ncases: [cases/anchors.yaml]\n"
        "gate: {suite: {pass_rate: '>= 0.98'}}\n",
        encoding="utf-8",
    )
    docs = json.loads((EXAMPLES / "corpus" / "docs.json").read_text(encoding="utf-8"))
    edited = [{**d, "text": d["text"].replace("refunds take 3-5", "refunds take 7-10")} for d in docs]
    (ws / "pr-docs.json").write_text(json.dumps(edited), encoding="utf-8")
    main_server, main_url = _serve(None)
    pr_server, pr_url = _serve(ws / "pr-docs.json")
    mp = pytest.MonkeyPatch()
    try:
        mp.chdir(ws)
        mp.setenv("RAG_URL", main_url)
        mp.setenv("GITHUB_SHA", MAIN_SHA)
        mp.setenv("GITHUB_REF", "refs/heads/main")
        assert _run(["run", "--cases", "cases/main.yaml", "--report", "main.json"])[0] == 1
        mp.setenv("GITHUB_SHA", "abc1234" + "0" * 33)
        mp.setenv("GITHUB_REF", "refs/pull/7/merge")
        argv = ["run", "--endpoint", pr_url, "--baseline", "main.json", "--comment-file", "c.md"]
        code, stdout = _run([*argv, "--html", "r.html", "--junit", "r.xml"])
        assert code == 1
        yield Outputs(
            stdout,
            (ws / "c.md").read_text(encoding="utf-8"),
            (ws / "r.html").read_text(encoding="utf-8"),
            (ws / "r.xml").read_text(encoding="utf-8"),
        )
    finally:
        mp.undo()
        for server in (main_server, pr_server):
            server.shutdown()  # type: ignore[attr-defined]
            server.server_close()  # type: ignore[attr-defined]


HEADLINE = (
    "Blocked by 1 regression (cs-003); pass_rate 0.925 < 0.98, failing on main@feedbee too (0.974 there); "
    "1 new case failing (cs-020). 3 more cases must pass."
)


def test_stdout_writes_this_runs_pass_rate_and_labels_mains(outputs: Outputs) -> None:
    lines = outputs.stdout.splitlines()
    assert lines[0] == f"ragjudge: FAIL: {HEADLINE}"
    assert "  [FAIL] pass_rate 0.925 < 0.98, failing on main@feedbee too (0.974 there)" in lines


def test_the_comment_writes_one_pass_rate_and_labels_the_others(outputs: Outputs) -> None:
    lines = outputs.comment.splitlines()
    main = "main@\u200bfeedbe\u200be"  # as `inline` writes a commit-like word (no autolink)
    assert lines[2] == (
        f"**Blocked by 1 regression (cs-003); pass\\_rate 0.925 &lt; 0.98, failing on {main} too (0.974 there); "
        "1 new case failing (cs-020). 3 more cases must pass.**"
    )
    assert f"| <code>pass\\_rate</code> | 0.925 | &gt;= 0.98 | ❌ (failing on {main} too, at 0.974) |" in lines
    # The deltas are over the 39 shared cases: their figures say so, beside this run's own.
    shared = "on the 39 cases both runs have (this run&#39;s pass_rate over its 40 cases: 0.925)"
    summary = next(line for line in lines if "more metric(s) against" in line)
    assert summary.endswith(f"no significant change, {shared}</summary>")
    assert f"| Metric | {main} | This run | Δ |" in outputs.comment
    assert "| <code>pass\\_rate</code> | 0.974 | 0.949 | ▼ -0.026 |" in outputs.comment
    assert "0.93 " not in outputs.comment and "0.97 " not in outputs.comment


def test_the_html_report_names_main_and_the_shared_cases(outputs: Outputs) -> None:
    assert (
        "Baseline main@feedbee, less than a day old. Its figures and this run's below are on the 39 cases both "
        "runs have (this run&#39;s pass_rate over its 40 cases: 0.925)." in outputs.html
    )
    assert "<h2>Against main@feedbee</h2>" in outputs.html
    assert "<td>pass_rate 0.925 &lt; 0.98, failing on main@feedbee too (0.974 there)</td>" in outputs.html
    assert "main.json" not in outputs.html
    assert '<th title="main@feedbee">main</th><th>this run</th>' in outputs.html
    assert '<td class="num base" data-label="main">0.974</td><td class="num now">0.949</td>' in outputs.html


def test_junit_writes_the_same_pass_rate(outputs: Outputs) -> None:
    assert "pass_rate 0.925 &lt; 0.98" in outputs.junit
    assert "0.93 &lt;" not in outputs.junit
