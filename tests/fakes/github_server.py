"""A fake of the GitHub REST endpoints a sticky-PR-comment Action uses, on 127.0.0.1.

Example: ``with FakeGitHub() as gh: gh.seed_comments(7, 120)`` then
``requests.get(f"{gh.url}/repos/o/r/issues/7/comments?per_page=100", headers={"Authorization": "Bearer t"})``.
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
