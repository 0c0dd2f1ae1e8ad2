"""The sticky comment: find ours (marker AND author) across pages, PATCH it, else POST; cap the body."""

from __future__ import annotations

from typing import Any

import pytest

from ragjudge.github.rest import GitHubClient, GitHubError
from ragjudge.github.sticky import ACTIONS_BOT, MAX_BODY_CHARS, compose, marker, token_login, upsert
from tests.fakes._http import Incoming, LoopbackServer, Outgoing
from tests.fakes.github_server import MAX_COMMENT_LENGTH, FakeGitHub

REPO = "octo-org/octo-repo"
TOKEN = "ghs_sticky_token_0000"


def gh_client(gh: FakeGitHub) -> GitHubClient:
    return GitHubClient(gh.url, TOKEN, sleep=lambda s: None)


def test_marker_names_the_header_and_cannot_be_closed_early() -> None:
    assert marker("gate") == "<!-- ragjudge:sticky:gate -->"
    assert marker("search service") == "<!-- ragjudge:sticky:search service -->"
    hostile = marker("x --> <b>@here</b>")
    assert hostile.count("-->") == 1 and hostile.endswith(" -->") and "@" not in hostile and "<b>" not in hostile
    assert marker("") == marker("gate")


def test_compose_caps_the_body_under_githubs_limit() -> None:
    text = compose("gate", "x" * 200_000)
    assert len(text) == MAX_BODY_CHARS == 65_000 < MAX_COMMENT_LENGTH
    assert text.startswith(marker("gate") + "\n") and "truncated" in text[-200:]
    assert compose("gate", "short") == marker("gate") + "\nshort"


def test_creates_then_updates(fake_github: FakeGitHub) -> None:
    c = gh_client(fake_github)
    first = upsert(c, REPO, 5, "gate", "one")
    second = upsert(c, REPO, 5, "gate", "two")

    assert first.action == "created" and second.action == "updated"
    assert first.url == second.url and first.comment_id == second.comment_id
    [comment] = fake_github.comments[5]
    assert comment["body"] == marker("gate") + "\ntwo"


def test_finds_ours_on_page_two_of_many(fake_github: FakeGitHub) -> None:
    fake_github.seed_comments(5, 120, author="octocat")
    mine = fake_github.add_comment(5, marker("gate") + "\nold", author=ACTIONS_BOT)
    fake_github.seed_comments(5, 90, author="octocat", body_fn=lambda i: marker("gate") + f" quoted {i}")

    result = upsert(gh_client(fake_github), REPO, 5, "gate", "new")

    assert result.action == "updated" and result.comment_id == mine["id"]
    assert fake_github.find_comment(int(mine["id"]))["body"].endswith("\nnew")  # type: ignore[index]
    assert len(fake_github.comments[5]) == 211
    assert [r.method for r in fake_github.requests].count("POST") == 0


def test_never_touches_another_authors_comment_with_the_marker(fake_github: FakeGitHub) -> None:
    theirs = fake_github.add_comment(5, marker("gate") + "\nquoting the bot", author="someone")

    result = upsert(gh_client(fake_github), REPO, 5, "gate", "mine")

    assert result.action == "created" and result.comment_id != theirs["id"]
    assert fake_github.find_comment(int(theirs["id"]))["body"] == marker("gate") + "\nquoting the bot"  # type: ignore[index]
    assert not any(r.method in ("PATCH", "DELETE") for r in fake_github.requests)


def test_other_headers_and_quotes_are_not_ours(fake_github: FakeGitHub) -> None:
    fake_github.add_comment(5, marker("gate-2") + "\nother header", author=ACTIONS_BOT)
    fake_github.add_comment(5, "> " + marker("gate") + "\na quote by the bot itself", author=ACTIONS_BOT)

    assert upsert(gh_client(fake_github), REPO, 5, "gate", "mine").action == "created"
    assert len(fake_github.comments[5]) == 3


def test_the_tokens_own_login_is_used_when_the_api_tells_it() -> None:
    with FakeGitHub(token_login="ragjudge-bot", user_forbidden=False) as gh:
        bot_comment = gh.add_comment(5, marker("gate") + "\nfrom the Actions bot", author=ACTIONS_BOT)
        mine = gh.add_comment(5, marker("gate") + "\nfrom the PAT's user", author="ragjudge-bot")
        client = gh_client(gh)

        assert token_login(client) == "ragjudge-bot"
        result = upsert(client, REPO, 5, "gate", "new")

        assert result.comment_id == mine["id"]
        assert gh.find_comment(int(bot_comment["id"]))["body"].endswith("from the Actions bot")  # type: ignore[index]


def test_login_falls_back_to_the_actions_bot(fake_github: FakeGitHub) -> None:
    assert token_login(gh_client(fake_github)) == ACTIONS_BOT  # GET /user is 403 for GITHUB_TOKEN


def test_our_own_duplicates_are_cleaned_up(fake_github: FakeGitHub) -> None:
    keep = fake_github.add_comment(5, marker("gate") + "\nfirst", author=ACTIONS_BOT)
    fake_github.add_comment(5, marker("gate") + "\nrace", author=ACTIONS_BOT)

    upsert(gh_client(fake_github), REPO, 5, "gate", "now")

    assert [c["id"] for c in fake_github.comments[5]] == [keep["id"]]


def test_create_false_only_updates(fake_github: FakeGitHub) -> None:
    client = gh_client(fake_github)
    assert upsert(client, REPO, 5, "gate", "pass", create=False).action == "skipped"
    assert fake_github.comments == {}


def test_a_long_body_is_posted_capped_never_422(fake_github: FakeGitHub) -> None:
    result = upsert(gh_client(fake_github), REPO, 5, "gate", "é" * 100_000)

    [body] = [b["body"] for b in fake_github.request_bodies if isinstance(b, dict)]
    assert result.action == "created" and len(body) <= 65_536


def test_write_errors_surface(fake_github: FakeGitHub) -> None:
    fake_github.fail_next("POST", 403)
    with pytest.raises(GitHubError) as err:
        upsert(gh_client(fake_github), REPO, 5, "gate", "x")
    assert err.value.status == 403


class _OddGitHub(LoopbackServer):
    """Replies GitHub would not send: list items that are not objects, a created comment without html_url."""

    def __init__(self, comments: list[Any]) -> None:
        super().__init__()
        self.comments = comments
        self.posted: list[Any] = []

    def handle(self, req: Incoming) -> Outgoing:
        if req.path == "/user":
            return Outgoing(403, {"message": "Resource not accessible by integration"})
        if req.method == "GET":
            return Outgoing(200, self.comments)
        if req.method == "POST":
            self.posted.append(req.json())
            return Outgoing(201, {"id": 99})
        return Outgoing(200, {"id": 7})


def test_a_comment_list_holding_non_objects_and_a_reply_without_html_url_are_warnings() -> None:
    odd = [1, "x", None, ["y"], {"id": 3, "user": "not-an-object", "body": marker("gate")}]
    with _OddGitHub(odd) as gh:
        result = upsert(GitHubClient(gh.url, TOKEN, sleep=lambda s: None), REPO, 5, "gate", "body")
        assert len(gh.posted) == 1  # none of the odd items was taken for ours
    assert (result.action, result.url, result.comment_id) == ("created", "", 99)
    assert result.warnings == (
        "GitHub's comment list held 4 item(s) that are not comment objects; skipped them",
        "GitHub's reply had no html_url: the comment was created, but its link is unknown",
    )


def test_a_normal_reply_gives_no_warning(fake_github: FakeGitHub) -> None:
    assert upsert(gh_client(fake_github), REPO, 5, "gate", "one").warnings == ()


@pytest.mark.parametrize("login", ["", 42, None, ["octocat"], {"login": "x"}])
def test_a_user_login_that_is_empty_or_not_a_string_falls_back_to_the_actions_bot(login: Any) -> None:
    with FakeGitHub(token_login=login, user_forbidden=False) as gh:
        ours = gh.add_comment(5, marker("gate") + "\nold", author=ACTIONS_BOT)
        client = gh_client(gh)

        assert token_login(client) == ACTIONS_BOT
        result = upsert(client, REPO, 5, "gate", "new")

        # Taken at its word, the odd login would own nothing here and a second sticky comment would be posted.
        assert (result.action, result.comment_id) == ("updated", ours["id"])
        assert [c["body"] for c in gh.comments[5]] == [marker("gate") + "\nnew"]
        assert [r.method for r in gh.requests].count("POST") == 0


def test_a_body_of_exactly_the_limit_is_unchanged_and_one_more_is_cut_to_it() -> None:
    head = marker("gate") + "\n"
    exact = "x" * (MAX_BODY_CHARS - len(head))
    assert compose("gate", exact) == head + exact
    over = compose("gate", exact + "y")
    assert len(over) == MAX_BODY_CHARS and "truncated" in over[-200:] and "xy" not in over
