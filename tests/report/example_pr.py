"""A PR against main on the example service, at any size: main's report, then the PR's run against it.

The PR edits three documents (card refunds 3-5 -> 7-10 business days, the return fee $6.99 -> $7.99, tracking
5 -> 7 days): each breaks `variants` copies of one case, three causes of this change's regressions; two causes
fail on main already (cs-014's forbidden claim, cs-031's missing detail), and passing cases fill the set to ten
times `variants`. Both services run on loopback; the CLI runs in-process.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from ragjudge import cli
from ragjudge.cases.files import read_items
from ragjudge.report.model import Report

service = importlib.import_module("ragjudge.examples.rag_service")
EXAMPLES = Path(service.__file__ or "").parent
BROKEN = ("cs-003", "cs-009", "cs-016")
FAILING_ON_MAIN = ("cs-014", "cs-031")


@dataclass
class PrRun:
    report: Report
    comment: str
    html: str


def _edit(text: str) -> str:
    text = text.replace("Credit card refunds take 3-5", "Credit card refunds take 7-10")
    return text.replace("$6.99", "$7.99").replace("5 days", "7 days")


def run_pr(ws: Path, variants: int) -> PrRun:
    cases = {i.data["id"]: i.data for i in read_items(EXAMPLES / "cases" / "anchors.yaml")}
    chosen = [{**cases[c], "id": f"{c}-v{k:02d}"} for c in (*BROKEN, *FAILING_ON_MAIN) for k in range(1, variants + 1)]
    passing = [c for c in cases if c not in (*BROKEN, *FAILING_ON_MAIN, "cs-020", "cs-026", "cs-043")]
    chosen += [{**cases[passing[k % len(passing)]], "id": f"p{k:04d}"} for k in range(5 * variants)]
    (ws / "cases").mkdir(parents=True, exist_ok=True)
    (ws / "cases" / "anchors.yaml").write_text(yaml.safe_dump(chosen, allow_unicode=True), encoding="utf-8")
    (ws / "ragjudge.yml").write_text(
        "endpoint: {url: '${RAG_URL}', timeout_s: 10, concurrency: 8}\ncases: [cases/anchors.yaml]\n"
        "gate: {suite: {pass_rate: '>= 0.98'}}\n",
        encoding="utf-8",
    )
    docs = json.loads((EXAMPLES / "corpus" / "docs.json").read_text(encoding="utf-8"))
    (ws / "pr-docs.json").write_text(json.dumps([{**d, "text": _edit(d["text"])} for d in docs]), encoding="utf-8")
    servers = [service.make_server(), service.make_server(corpus=ws / "pr-docs.json")]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    main_url, pr_url = (f"http://127.0.0.1:{s.server_address[1]}/ask" for s in servers)
    mp = pytest.MonkeyPatch()
    try:
        mp.chdir(ws)
        mp.setenv("RAG_URL", main_url)
        mp.setenv("GITHUB_SHA", "feedbee" + "0" * 33)
        mp.setenv("GITHUB_REF", "refs/heads/main")
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert cli.main(["run", "--report", "main.json"]) == 1
            mp.setenv("GITHUB_SHA", "abc1234" + "0" * 33)
            mp.setenv("GITHUB_REF", "refs/pull/7/merge")
            argv = ["run", "--endpoint", pr_url, "--baseline", "main.json", "--report", "pr.json"]
            assert cli.main([*argv, "--comment-file", "c.md", "--html", "r.html"]) == 1
        return PrRun(
            Report.model_validate_json((ws / "pr.json").read_text(encoding="utf-8")),
            (ws / "c.md").read_text(encoding="utf-8"),
            (ws / "r.html").read_text(encoding="utf-8"),
        )
    finally:
        mp.undo()
        for server in servers:
            server.shutdown()
            server.server_close()
