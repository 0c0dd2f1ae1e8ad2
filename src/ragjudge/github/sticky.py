"""The sticky PR comment: one per header, updated in place on every run.

ragjudge's comment starts with a hidden marker naming its header. The comment to
update is the one that starts with that marker AND was written by the account the
token acts as: `GET /user` tells who that is when the token may ask (a personal or
app user token), else it is the Actions token's `github-actions[bot]`. A comment by
anyone else is never touched, even if it quotes the marker.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import Any, Literal

from ragjudge.github.rest import GitHubClient, GitHubError

ACTIONS_BOT = "github-actions[bot]"
MAX_BODY_CHARS = 65_000
"""GitHub rejects comment bodies over 65,536 characters (422); stay clearly under."""
_TRUNCATED = "\n\n…comment truncated to fit GitHub's limit: see the job summary and the JSON report.\n"
_UNSAFE = re.compile(r"[^A-Za-z0-9._/ -]|-(?=-)")


def marker(header: str) -> str:
    """The hidden first line of the comment; the header is reduced to characters that cannot end it."""
    return f"<!-- ragjudge:sticky:{_UNSAFE.sub('_', header.strip()) or 'gate'} -->"


def compose(header: str, body: str, limit: int = MAX_BODY_CHARS) -> str:
    """Marker plus body, cut to `limit` characters with a note when it is longer."""
    text = f"{marker(header)}\n{body}"
    if len(text) <= limit:
        return text
    return text[: limit - len(_TRUNCATED)] + _TRUNCATED


@dataclass(frozen=True)
class StickyResult:
    """What happened to the comment."""

    action: Literal["created", "updated", "skipped"]
    url: str = ""
    """`html_url` of the comment; empty when skipped."""
    comment_id: int | None = None


def token_login(client: GitHubClient) -> str:
    """The account the token comments as; the Actions token may not ask, and then it is the Actions bot."""
    try:
        user = client.request("GET", "/user")
    except GitHubError:
        return ACTIONS_BOT
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) and login else ACTIONS_BOT


def find_own(client: GitHubClient, repo: str, pr: int, header: str, login: str) -> list[dict[str, Any]]:
    """Every comment on the PR that is ours for this header, oldest first."""
    tag = marker(header)
    found = []
    for comment in client.paginate(f"/repos/{repo}/issues/{pr}/comments"):
        if not isinstance(comment, dict):
            continue
        author = (comment.get("user") or {}).get("login")
        body = comment.get("body") or ""
        if author == login and isinstance(body, str) and body.lstrip().startswith(tag):
            found.append(comment)
    return found


def upsert(client: GitHubClient, repo: str, pr: int, header: str, body: str, *, create: bool = True) -> StickyResult:
    """PATCH our comment for `header`, else POST one (unless `create` is False).

    Duplicates of our own from an earlier race are deleted, best effort, so one remains.
    """
    text = compose(header, body)
    login = token_login(client)
    own = find_own(client, repo, pr, header, login)
    if own:
        first, extra = own[0], own[1:]
        updated = client.request("PATCH", f"/repos/{repo}/issues/comments/{first['id']}", json={"body": text})
        for duplicate in extra:
            with contextlib.suppress(GitHubError):  # best effort: one stale duplicate is harmless
                client.request("DELETE", f"/repos/{repo}/issues/comments/{duplicate['id']}")
        return StickyResult("updated", _url(updated, first), int(first["id"]))
    if not create:
        return StickyResult("skipped")
    created = client.request("POST", f"/repos/{repo}/issues/{pr}/comments", json={"body": text})
    return StickyResult("created", _url(created, {}), _id(created))


def _url(reply: Any, fallback: dict[str, Any]) -> str:
    for source in (reply, fallback):
        if isinstance(source, dict) and isinstance(source.get("html_url"), str):
            return str(source["html_url"])
    return ""


def _id(reply: Any) -> int | None:
    value = reply.get("id") if isinstance(reply, dict) else None
    return value if isinstance(value, int) else None
