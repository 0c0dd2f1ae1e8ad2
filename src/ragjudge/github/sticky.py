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
    warnings: tuple[str, ...] = ()
    """Replies not shaped like GitHub's that were worked around (a comment list item that is not an object,
    a reply without `html_url`)."""


def token_login(client: GitHubClient) -> str:
    """The account the token comments as; the Actions token may not ask, and then it is the Actions bot."""
    try:
        user = client.request("GET", "/user")
    except GitHubError:
        return ACTIONS_BOT
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) and login else ACTIONS_BOT


def find_own(
    client: GitHubClient, repo: str, pr: int, header: str, login: str, warnings: list[str] | None = None
) -> list[dict[str, Any]]:
    """Every comment on the PR that is ours for this header, oldest first; odd list items are noted in `warnings`."""
    tag = marker(header)
    found = []
    skipped = 0
    for comment in client.paginate(f"/repos/{repo}/issues/{pr}/comments"):
        if not isinstance(comment, dict):
            skipped += 1
            continue
        user = comment.get("user")
        author = user.get("login") if isinstance(user, dict) else None
        body = comment.get("body") or ""
        if author == login and isinstance(body, str) and body.lstrip().startswith(tag):
            found.append(comment)
    if skipped and warnings is not None:
        warnings.append(f"GitHub's comment list held {skipped} item(s) that are not comment objects; skipped them")
    return found


def upsert(client: GitHubClient, repo: str, pr: int, header: str, body: str, *, create: bool = True) -> StickyResult:
    """PATCH our comment for `header`, else POST one (unless `create` is False).

    Duplicates of our own from an earlier race are deleted, best effort, so one remains.
    """
    text = compose(header, body)
    login = token_login(client)
    warnings: list[str] = []
    own = find_own(client, repo, pr, header, login, warnings)
    if own:
        first, extra = own[0], own[1:]
        updated = client.request("PATCH", f"/repos/{repo}/issues/comments/{first['id']}", json={"body": text})
        for duplicate in extra:
            with contextlib.suppress(GitHubError):  # best effort: one stale duplicate is harmless
                client.request("DELETE", f"/repos/{repo}/issues/comments/{duplicate['id']}")
        url = _url(updated, first, "updated", warnings)
        return StickyResult("updated", url, int(first["id"]), tuple(warnings))
    if not create:
        return StickyResult("skipped", warnings=tuple(warnings))
    created = client.request("POST", f"/repos/{repo}/issues/{pr}/comments", json={"body": text})
    return StickyResult("created", _url(created, {}, "created", warnings), _id(created), tuple(warnings))


def _url(reply: Any, fallback: dict[str, Any], action: str, warnings: list[str]) -> str:
    for source in (reply, fallback):
        if isinstance(source, dict) and isinstance(source.get("html_url"), str):
            return str(source["html_url"])
    warnings.append(f"GitHub's reply had no html_url: the comment was {action}, but its link is unknown")
    return ""


def _id(reply: Any) -> int | None:
    value = reply.get("id") if isinstance(reply, dict) else None
    return value if isinstance(value, int) else None
