"""GitHubClient against FakeGitHub: retries by GitHub's rules (with an injected sleep), pagination."""

from __future__ import annotations

import pytest

from ragjudge.github.rest import GitHubClient, GitHubError
from tests.fakes.github_server import FakeGitHub

TOKEN = "ghs_rest_token_123456"


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client(gh: FakeGitHub, sleeps: Sleeps, clock: float = 1_700_000_000.0) -> GitHubClient:
    return GitHubClient(gh.url, TOKEN, sleep=sleeps, clock=lambda: clock)


def create(c: GitHubClient) -> object:
    return c.request("POST", "/repos/o/r/issues/1/comments", json={"body": "hi"})


def test_502_is_retried_with_backoff_then_succeeds(fake_github: FakeGitHub) -> None:
    fake_github.fail_next("POST", 502, count=2)
    sleeps = Sleeps()

    reply = create(client(fake_github, sleeps))

    assert isinstance(reply, dict) and reply["body"] == "hi"
    assert sleeps == [1.0, 2.0]
    assert [r.method for r in fake_github.requests] == ["POST"] * 3


def test_5xx_gives_up_after_the_retries(fake_github: FakeGitHub) -> None:
    fake_github.fail_next("POST", 503, count=10)
    sleeps = Sleeps()

    with pytest.raises(GitHubError) as err:
        create(client(fake_github, sleeps))

    assert err.value.status == 503 and "HTTP 503" in err.value.message and "after 5 attempts" in err.value.message
    assert len(sleeps) == 4 and fake_github.comments == {}


def test_secondary_rate_limit_waits_retry_after(fake_github: FakeGitHub) -> None:
    fake_github.fail_secondary_rate_limit("POST", retry_after="7")
    sleeps = Sleeps()

    create(client(fake_github, sleeps))

    assert sleeps == [7.0] and len(fake_github.comments[1]) == 1


def test_a_retry_after_date_is_read_with_the_clients_clock(fake_github: FakeGitHub) -> None:
    # 1_700_000_000 is Tue, 14 Nov 2023 22:13:20 GMT: the server asks for 12 s from then.
    fake_github.fail_next("POST", 429, headers={"retry-after": "Tue, 14 Nov 2023 22:13:32 GMT"})
    sleeps = Sleeps()

    create(client(fake_github, sleeps))

    assert sleeps == [12.0]


def test_a_negative_retry_after_is_no_wait(fake_github: FakeGitHub) -> None:
    fake_github.fail_next("POST", 502, headers={"retry-after": "-3"})
    sleeps = Sleeps()

    create(client(fake_github, sleeps))

    assert sleeps == [0.0]  # never a negative sleep, which `time.sleep` refuses


def test_rate_limit_without_retry_after_waits_until_reset(fake_github: FakeGitHub) -> None:
    now = 1_700_000_000.0
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(now) + 30)}
    fake_github.fail_next("POST", 403, headers=headers, body={"message": "API rate limit exceeded for installation"})
    sleeps = Sleeps()

    create(client(fake_github, sleeps, clock=now))

    assert sleeps == [31.0]


def test_secondary_rate_limit_without_headers_waits_a_minute(fake_github: FakeGitHub) -> None:
    fake_github.fail_next("POST", 403, body={"message": "You have exceeded a secondary rate limit."})
    sleeps = Sleeps()

    create(client(fake_github, sleeps))

    assert sleeps == [60.0]


def test_a_reset_too_far_away_is_not_waited_for(fake_github: FakeGitHub) -> None:
    now = 1_700_000_000.0
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(now) + 3600)}
    fake_github.fail_next("POST", 403, headers=headers, body={"message": "API rate limit exceeded"})
    sleeps = Sleeps()

    with pytest.raises(GitHubError):
        create(client(fake_github, sleeps, clock=now))
    assert sleeps == []


def test_a_read_only_403_is_not_retried_and_says_why(fake_github: FakeGitHub) -> None:
    fake_github.fail_next("POST", 403)
    sleeps = Sleeps()

    with pytest.raises(GitHubError) as err:
        create(client(fake_github, sleeps))

    assert sleeps == [] and err.value.status == 403
    assert "Resource not accessible by integration" in err.value.message
    assert err.value.tip is not None and "read-only" in err.value.tip
    assert TOKEN not in err.value.render()


def test_connection_refused_is_retried_then_reported() -> None:
    with FakeGitHub() as gh:
        url = gh.url
    sleeps = Sleeps()

    with pytest.raises(GitHubError) as err:
        GitHubClient(url, TOKEN, sleep=sleeps, retries=2).request("GET", "/user")

    assert err.value.status == 0 and "ConnectionError after 3 attempts" in err.value.message
    assert sleeps == [1.0, 2.0]


@pytest.mark.parametrize("repository_id_links", [False, True])
def test_pagination_follows_link_next_100_a_page(repository_id_links: bool) -> None:
    with FakeGitHub(repository_id_links=repository_id_links) as gh:
        gh.seed_comments(3, 250)
        items = list(GitHubClient(gh.url, TOKEN).paginate("/repos/o/r/issues/3/comments"))
        pages = [r.path for r in gh.requests]

    assert [c["body"] for c in items] == [f"comment {i}" for i in range(250)]
    assert len(pages) == 3 and all("per_page=100" in p for p in pages)
    assert "page=2" in pages[1] and "page=3" in pages[2]


def test_pagination_never_follows_a_link_to_another_host(fake_github: FakeGitHub) -> None:
    class Evil(FakeGitHub):
        def handle(self, req):  # type: ignore[no-untyped-def]
            out = super().handle(req)
            out.headers["Link"] = '<https://evil.example/steal?page=2>; rel="next"'
            return out

    with Evil() as gh, pytest.raises(GitHubError, match="leaves"):
        list(GitHubClient(gh.url, TOKEN).paginate("/repos/o/r/issues/3/comments"))


def test_a_pagination_link_that_is_not_a_url_is_refused_not_a_crash() -> None:
    class Garbled(FakeGitHub):
        def handle(self, req):  # type: ignore[no-untyped-def]
            out = super().handle(req)
            out.headers["Link"] = '<https://[evil.example/steal?page=2>; rel="next"'
            return out

    with Garbled() as gh, pytest.raises(GitHubError, match=r"leaves .*: \(unparsable URL\)"):
        list(GitHubClient(gh.url, TOKEN).paginate("/repos/o/r/issues/3/comments"))


def test_headers_sent(fake_github: FakeGitHub) -> None:
    GitHubClient(fake_github.url + "/", TOKEN).request("GET", "/repos/o/r/issues/1/comments")

    [req] = fake_github.requests
    assert req.path == "/repos/o/r/issues/1/comments"
    assert req.headers["authorization"] == f"Bearer {TOKEN}"
    assert req.headers["accept"] == "application/vnd.github+json"
    assert req.headers["x-github-api-version"] == "2022-11-28"
    assert req.headers["user-agent"].startswith("ragjudge/")
