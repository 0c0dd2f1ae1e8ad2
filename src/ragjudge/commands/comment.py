"""`ragjudge comment`: render (and, with --post, post) the comment from a saved report.

`--post` is for the trusted side of a fork PR: a `workflow_run` workflow that
downloads the report artifact and posts the sticky comment with a write token,
without checking out or running the PR's code.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from ragjudge import masking
from ragjudge.errors import UsageError
from ragjudge.outpaths import check_output_paths
from ragjudge.report.markdown import render_comment
from ragjudge.report.reading import load_report

_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("comment", help="render the PR comment from a JSON report (and post it with --post)")
    p.add_argument("--report", type=Path, required=True, metavar="FILE", help="report written by `run --report`")
    p.add_argument("--template", type=Path, metavar="FILE", help="Jinja template for the comment")
    p.add_argument("--comment-file", type=Path, metavar="FILE", help="write the comment here (default: stdout)")
    p.add_argument(
        "--post",
        action="store_true",
        help="post it as the sticky PR comment (token from GITHUB_TOKEN, API from GITHUB_API_URL)",
    )
    p.add_argument("--repo", metavar="OWNER/REPO", help="with --post: the repository (default: $GITHUB_REPOSITORY)")
    p.add_argument("--pr", type=int, metavar="N", help="with --post: the PR number (default: from $GITHUB_EVENT_PATH)")
    p.add_argument("--header", default="gate", help="with --post: the sticky comment's header (default: gate)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    report = load_report(args.report)
    check_output_paths((("--comment-file", args.comment_file),))
    text = render_comment(report, args.template, report_path=str(args.report))
    if args.comment_file:
        args.comment_file.write_text(masking.mask(text), encoding="utf-8")
    elif not args.post:
        sys.stdout.write(text)
    if args.post:
        post(text, args.repo, args.pr, args.header)
    return 0


def post(text: str, repo: str | None, pr: int | None, header: str) -> None:
    # Imported here: only --post talks to GitHub, and the REST client brings requests and urllib3.
    from ragjudge.github.env import RunnerEnv
    from ragjudge.github.rest import GitHubClient
    from ragjudge.github.sticky import upsert

    runner = RunnerEnv.from_environ(os.environ)
    token = os.environ.get("GITHUB_TOKEN", "").strip()
    masking.register(token)
    repo = repo or runner.repository
    pr = pr if pr is not None else runner.pr_number
    if not token:
        raise UsageError("--post needs a token in GITHUB_TOKEN", tip="env: GITHUB_TOKEN: ${{ github.token }}")
    if not repo or not _REPO.fullmatch(repo):
        raise UsageError(f"--post needs --repo OWNER/REPO (got {repo!r})" if repo else "--post needs --repo OWNER/REPO")
    if pr is None or pr < 1:
        raise UsageError("--post needs --pr N (a pull request number)", tip="the fork example saves it in the artifact")
    result = upsert(GitHubClient(runner.api_url, token), repo, pr, header, text)
    for warning in result.warnings:
        print(f"ragjudge: warning: {warning}", file=sys.stderr)
    print(f"ragjudge: PR comment {result.action}: {result.url or '(no link)'}")
