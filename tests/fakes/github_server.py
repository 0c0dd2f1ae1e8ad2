"""A fake of the GitHub REST endpoints a sticky-PR-comment Action uses, on 127.0.0.1.

Example: ``with FakeGitHub() as gh: gh.seed_comments(7, 120)`` then
``requests.get(f"{gh.url}/repos/o/r/issues/7/comments?per_page=100", headers={"Authorization": "Bearer t"})``.

Also the Actions endpoints that find and download an artifact: ``GET /repos/{o}/{r}`` (default
branch), workflow runs (``?branch=&status=success``, paginated, newest first), a run's artifacts
(``?name=``, paginated) and ``GET .../actions/artifacts/{id}/zip``, which answers 302 to a
``FakeArtifactStorage`` (a second loopback server, as GitHub redirects to blob storage on another
host) or 410 for an expired artifact. The storage rejects any request carrying ``Authorization``,
as Azure Blob Storage rejects a bearer token beside a SAS signature.
"""

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlencode

from tests.fakes._http import Incoming, LoopbackServer, Outgoing

__all__ = [
    "DOCS",
    "MAX_COMMENT_LENGTH",
    "NOT_ACCESSIBLE",
    "SECONDARY_RATE_LIMIT_MESSAGE",
    "FakeArtifactStorage",
    "FakeGitHub",
    "RecordedRequest",
]

MAX_COMMENT_LENGTH = 65536
DOCS = "https://docs.github.com/rest"
NOT_ACCESSIBLE = "Resource not accessible by integration"
SECONDARY_RATE_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID "
    "FA2D:87B1:8879E3:1176C87:6570B7E6."
)
_TOO_LONG = {
    "message": "Validation Failed",
    "errors": [
        {
            "resource": "IssueComment",
            "code": "custom",
            "field": "body",
            "message": f"body is too long (maximum is {MAX_COMMENT_LENGTH} characters)",
        }
    ],
    "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
    "status": "422",
}
_SCOPE = r"/(?:repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)|repositories/(?P<rid>\d+))"
_ISSUE_COMMENTS = re.compile(_SCOPE + r"/issues/(?P<num>\d+)/comments/?")
_ONE_COMMENT = re.compile(_SCOPE + r"/issues/comments/(?P<cid>\d+)/?")
_REPOSITORY = re.compile(_SCOPE + r"/?")
_WORKFLOW_RUNS = re.compile(_SCOPE + r"/actions/workflows/(?P<wf>[^/]+)/runs/?")
_RUN_ARTIFACTS = re.compile(_SCOPE + r"/actions/runs/(?P<run>\d+)/artifacts/?")
_ARTIFACT_ZIP = re.compile(_SCOPE + r"/actions/artifacts/(?P<aid>\d+)/zip/?")


class FakeArtifactStorage(LoopbackServer):
    """Blob storage for artifact zips: ``GET /blob/{key}?sig=...`` without ``Authorization``."""

    def __init__(self) -> None:
        super().__init__()
        self.blobs: dict[str, bytes] = {}
        self.requests: list[RecordedRequest] = []

    def handle(self, req: Incoming) -> Outgoing:
        with self._lock:
            self.requests.append(RecordedRequest(req.method, req.raw_path, req.headers))
        if "authorization" in req.headers:
            body = (
                "<Error><Code>InvalidAuthenticationInfo</Code>"
                "<Message>Authentication information is not given in the correct format.</Message></Error>"
            )
            return Outgoing(400, body, {"Content-Type": "application/xml"})
        key = req.path.removeprefix("/blob/")
        if req.method != "GET" or key not in self.blobs or "sig" not in req.query:
            return Outgoing(404, "<Error><Code>BlobNotFound</Code></Error>", {"Content-Type": "application/xml"})
        return Outgoing(200, self.blobs[key], {"Content-Type": "application/zip"})


class RecordedRequest(NamedTuple):
    method: str
    path: str  # including the query string
    headers: dict[str, str]  # lower-cased names


@dataclass
class _Fault:
    method: str
    status: int
    headers: dict[str, str]
    body: Any
    remaining: int
    path_contains: str | None


def _default_fault_body(status: int) -> Any:
    if status == 401:
        return {"message": "Bad credentials", "documentation_url": DOCS, "status": "401"}
    if status == 403:
        return {"message": NOT_ACCESSIBLE, "documentation_url": DOCS, "status": "403"}
    if status == 404:
        return {"message": "Not Found", "documentation_url": DOCS, "status": "404"}
    if status == 422:
        return {"message": "Validation Failed", "documentation_url": DOCS, "status": "422"}
    if status == 500:
        return {"message": "Server Error"}
    return {"message": HTTPStatus(status).phrase}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class FakeGitHub(LoopbackServer):
    """In-memory issue comments + ``GET /user``; requires ``Authorization: Bearer|token <t>``.

    ``token_login``: the login that authored comments created through the API (and ``GET /user``'s answer).
    ``user_forbidden``: True (default, like the Actions GITHUB_TOKEN) -> ``GET /user`` is 403 NOT_ACCESSIBLE.
    ``token``: if set, any other token gets 401 "Bad credentials".
    ``repo``: "owner/name" used in ``html_url``s (requests for any owner/repo are served).
    ``repository_id_links``: pagination ``Link`` URLs use ``/repositories/{repository_id}/...`` as
    api.github.com often does (also served), instead of echoing ``/repos/{owner}/{repo}/...``.
    """

    def __init__(
        self,
        *,
        token_login: str = "github-actions[bot]",
        user_forbidden: bool = True,
        token: str | None = None,
        repo: str = "octo-org/octo-repo",
        repository_id: int = 123456789,
        repository_id_links: bool = False,
    ) -> None:
        super().__init__()
        self.token_login = token_login
        self.user_forbidden = user_forbidden
        self.token = token
        self.repo = repo
        self.repository_id = repository_id
        self.repository_id_links = repository_id_links
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.request_bodies: list[Any] = []  # parallel to .requests (None when no JSON body)
        self._requests: list[RecordedRequest] = []
        self._faults: list[_Fault] = []
        self._next_id = 1_000_000_001
        self.default_branch = "main"
        self.workflow_runs: list[dict[str, Any]] = []  # newest first, as GitHub lists them
        self.filter_runs = True  # False: the runs query's `branch` and `status` are ignored (every run listed)
        self.artifacts: dict[int, list[dict[str, Any]]] = {}  # run id -> its artifacts
        self.storage: FakeArtifactStorage | None = None

    # -- test-side helpers ---------------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        """Snapshot of every request received, as ``(method, path_with_query, headers)``."""
        with self._lock:
            return list(self._requests)

    def add_comment(self, issue: int, body: str, author: str | None = None) -> dict[str, Any]:
        """Store a comment directly (no HTTP, no length check); returns the stored dict."""
        with self._lock:
            cid, self._next_id = self._next_id, self._next_id + 1
            stamp, login = _now(), author or self.token_login
            comment = {
                "id": cid,
                "body": body,
                "user": {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"},
                "html_url": f"https://github.com/{self.repo}/pull/{issue}#issuecomment-{cid}",
                "created_at": stamp,
                "updated_at": stamp,
            }
            self.comments.setdefault(issue, []).append(comment)
            return comment

    def seed_comments(
        self, issue: int, n: int, author: str = "someone", body_fn: Callable[[int], str] | None = None
    ) -> list[dict[str, Any]]:
        """Append ``n`` comments by ``author``; body ``body_fn(i)`` (default ``f"comment {i}"``), i=0..n-1."""
        fn = body_fn or (lambda i: f"comment {i}")
        return [self.add_comment(issue, fn(i), author) for i in range(n)]

    def add_workflow_run(
        self,
        workflow: str = "rag-gate.yml",
        branch: str = "main",
        conclusion: str = "success",
        artifacts: tuple[tuple[str, bytes, bool], ...] = (),
        head_sha: str = "abc1234def5678",
        event: str = "push",
        head_repository: str | None = None,
    ) -> dict[str, Any]:
        """A completed run of ``workflow`` on ``branch`` (newer than every run before it), with artifacts
        ``(name, zip bytes, expired)``; the zips go to ``self.storage``, which must be set. ``event`` and
        ``head_repository`` (default: this repository) as GitHub reports them: a fork's pull request is
        ``event="pull_request", head_repository="fork-owner/octo-repo"``."""
        with self._lock:
            run_id, self._next_id = self._next_id, self._next_id + 1
            run = {
                "id": run_id,
                "name": "RAG gate",
                "path": f".github/workflows/{workflow}",
                "head_branch": branch,
                "head_sha": head_sha,
                "event": event,
                "repository": {"full_name": self.repo},
                "head_repository": {"full_name": head_repository or self.repo},
                "status": "completed",
                "conclusion": conclusion,
                "created_at": _now(),
                "html_url": f"https://github.com/{self.repo}/actions/runs/{run_id}",
            }
            self.workflow_runs.insert(0, run)
            items = []
            for name, data, expired in artifacts:
                aid, self._next_id = self._next_id, self._next_id + 1
                if self.storage is None:
                    raise RuntimeError("set FakeGitHub.storage before adding artifacts")
                self.storage.blobs[str(aid)] = data
                items.append(
                    {
                        "id": aid,
                        "name": name,
                        "size_in_bytes": len(data),
                        "archive_download_url": f"{self.url}/repos/{self.repo}/actions/artifacts/{aid}/zip",
                        "expired": expired,
                        "created_at": _now(),
                        "expires_at": "2020-01-01T00:00:00Z" if expired else "2099-01-01T00:00:00Z",
                        "workflow_run": {"id": run_id, "head_branch": branch, "head_sha": head_sha},
                    }
                )
            self.artifacts[run_id] = items
            return run

    def find_comment(self, comment_id: int) -> dict[str, Any] | None:
        with self._lock:
            for items in self.comments.values():
                for c in items:
                    if c["id"] == comment_id:
                        return c
        return None

    def fail_next(
        self,
        method: str,
        status: int,
        headers: dict[str, str] | None = None,
        body: Any = None,
        count: int = 1,
        path_contains: str | None = None,
    ) -> None:
        """The next ``count`` authenticated requests with ``method`` ("*" = any) — and, if given, whose path
        contains ``path_contains`` — get ``status`` (body defaults to a GitHub-like one for the status)."""
        fault = _Fault(
            method.upper(),
            status,
            dict(headers or {}),
            _default_fault_body(status) if body is None else body,
            count,
            path_contains,
        )
        with self._lock:
            self._faults.append(fault)

    def fail_secondary_rate_limit(self, method: str = "POST", retry_after: str = "1", count: int = 1) -> None:
        """403 + ``retry-after`` + "You have exceeded a secondary rate limit..." (remaining quota > 0)."""
        body = {
            "message": SECONDARY_RATE_LIMIT_MESSAGE,
            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
            "#about-secondary-rate-limits",
        }
        self.fail_next(method, 403, {"retry-after": retry_after, "x-ratelimit-remaining": "4990"}, body, count)

    # -- server side ---------------------------------------------------------------------------------
    def handle(self, req: Incoming) -> Outgoing:
        try:
            body = req.json()
        except ValueError:
            body = None
        with self._lock:
            self._requests.append(RecordedRequest(req.method, req.raw_path, req.headers))
            self.request_bodies.append(body)
        out = self._route(req, body)
        base = {
            "x-github-request-id": uuid.uuid4().hex[:20].upper(),
            "x-github-media-type": "github.v3; format=json",
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": "4999",
            "x-ratelimit-resource": "core",
        }
        out.headers = {**base, **out.headers}
        return out

    def _take_fault(self, req: Incoming) -> _Fault | None:
        with self._lock:
            for f in self._faults:
                if f.method in ("*", req.method) and (f.path_contains is None or f.path_contains in req.raw_path):
                    f.remaining -= 1
                    if f.remaining <= 0:
                        self._faults.remove(f)
                    return f
        return None

    def _route(self, req: Incoming, body: Any) -> Outgoing:
        auth = req.headers.get("authorization", "")
        scheme, _, tok = auth.partition(" ")
        if not auth:
            return Outgoing(401, {"message": "Requires authentication", "documentation_url": DOCS, "status": "401"})
        if scheme.lower() not in ("bearer", "token") or not tok.strip() or (self.token and tok != self.token):
            return Outgoing(401, _default_fault_body(401))
        fault = self._take_fault(req)
        if fault is not None:
            return Outgoing(fault.status, fault.body, dict(fault.headers))
        not_found = Outgoing(404, _default_fault_body(404))
        if req.method == "GET" and (actions := self._actions(req)) is not None:
            return actions
        if req.path == "/user" and req.method == "GET":
            if self.user_forbidden:
                doc = "https://docs.github.com/rest/users/users#get-the-authenticated-user"
                return Outgoing(403, {"message": NOT_ACCESSIBLE, "documentation_url": doc, "status": "403"})
            return Outgoing(200, {"login": self.token_login, "id": 41898282, "type": "Bot"})
        if m := _ISSUE_COMMENTS.fullmatch(req.path):
            issue = int(m["num"])
            if req.method == "GET":
                return self._list(req, issue)
            if req.method == "POST":
                if (err := self._invalid_body(body)) is not None:
                    return err
                c = self.add_comment(issue, body["body"])
                return Outgoing(201, dict(c), {"Location": f"{self.url}/repos/{self.repo}/issues/comments/{c['id']}"})
            return not_found
        if m := _ONE_COMMENT.fullmatch(req.path):
            comment = self.find_comment(int(m["cid"]))
            if comment is None:
                return not_found
            if req.method == "GET":
                return Outgoing(200, dict(comment))
            if req.method == "PATCH":
                if (err := self._invalid_body(body)) is not None:
                    return err
                with self._lock:
                    comment["body"], comment["updated_at"] = body["body"], _now()
                return Outgoing(200, dict(comment))
            if req.method == "DELETE":
                with self._lock:
                    for items in self.comments.values():
                        if comment in items:
                            items.remove(comment)
                return Outgoing(204)
        return not_found

    def _actions(self, req: Incoming) -> Outgoing | None:
        params = {k: v[-1] for k, v in req.query.items()}
        if m := _WORKFLOW_RUNS.fullmatch(req.path):
            with self._lock:
                runs = [
                    dict(r)
                    for r in self.workflow_runs
                    if r["path"].endswith("/" + m["wf"])
                    and (
                        not self.filter_runs
                        or (
                            params.get("branch", r["head_branch"]) == r["head_branch"]
                            and params.get("status", r["conclusion"]) in (r["conclusion"], r["status"])
                        )
                    )
                ]
            return self._paged(req, runs, "workflow_runs")
        if m := _RUN_ARTIFACTS.fullmatch(req.path):
            with self._lock:
                items = [dict(a) for a in self.artifacts.get(int(m["run"]), [])]
            if "name" in params:
                items = [a for a in items if a["name"] == params["name"]]
            return self._paged(req, items, "artifacts")
        if m := _ARTIFACT_ZIP.fullmatch(req.path):
            aid = int(m["aid"])
            with self._lock:
                found = [a for items in self.artifacts.values() for a in items if a["id"] == aid]
            if not found:
                return Outgoing(404, _default_fault_body(404))
            if found[0]["expired"]:
                return Outgoing(410, {"message": "Artifact has expired", "documentation_url": DOCS, "status": "410"})
            assert self.storage is not None
            return Outgoing(302, None, {"Location": f"{self.storage.url}/blob/{aid}?sv=2021&sig=fakesignature"})
        if _REPOSITORY.fullmatch(req.path):
            return Outgoing(200, {"full_name": self.repo, "default_branch": self.default_branch})
        return None

    def _paged(self, req: Incoming, items: list[dict[str, Any]], key: str) -> Outgoing:
        """``{"total_count", key: [...]}`` a page at a time, with a ``Link`` header like GitHub's."""
        query = parse_qsl(req.raw_path.partition("?")[2], keep_blank_values=True)
        params = dict(query)
        per_page = max(1, min(100, int(params.get("per_page", "30"))))
        page = max(1, int(params.get("page", "1")))
        last = max(1, -(-len(items) // per_page))
        kept = [(k, v) for k, v in query if k != "page"]
        rels = []
        if page < last:
            rels.append(f'<{self.url}{req.path}?{urlencode([*kept, ("page", str(page + 1))])}>; rel="next"')
            rels.append(f'<{self.url}{req.path}?{urlencode([*kept, ("page", str(last))])}>; rel="last"')
        body = {"total_count": len(items), key: items[(page - 1) * per_page : page * per_page]}
        return Outgoing(200, body, {"Link": ", ".join(rels)} if rels else {})

    @staticmethod
    def _invalid_body(body: Any) -> Outgoing | None:
        if not isinstance(body, dict) or not isinstance(body.get("body"), str):
            err = {"resource": "IssueComment", "code": "missing_field", "field": "body"}
            return Outgoing(422, {"message": "Validation Failed", "errors": [err], "documentation_url": DOCS})
        if len(body["body"]) > MAX_COMMENT_LENGTH:
            return Outgoing(422, _TOO_LONG)
        return None

    def _list(self, req: Incoming, issue: int) -> Outgoing:
        query = parse_qsl(req.raw_path.partition("?")[2], keep_blank_values=True)
        params = dict(query)
        try:
            per_page = max(1, min(100, int(params.get("per_page", "30"))))
            page = max(1, int(params.get("page", "1")))
        except ValueError:
            return Outgoing(422, {"message": "Validation Failed", "documentation_url": DOCS})
        with self._lock:
            items = [dict(c) for c in self.comments.get(issue, [])]
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        path = req.path
        if self.repository_id_links:
            path = f"/repositories/{self.repository_id}/issues/{issue}/comments"
        kept = [(k, v) for k, v in query if k != "page"]

        def link(p: int, rel: str) -> str:
            return f'<{self.url}{path}?{urlencode([*kept, ("page", str(p))])}>; rel="{rel}"'

        rels: list[str] = []
        if page > 1:
            rels.append(link(page - 1, "prev"))
        if page < last:
            rels += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            rels.append(link(1, "first"))
        return Outgoing(200, chunk, {"Link": ", ".join(rels)} if rels and last > 1 else {})
