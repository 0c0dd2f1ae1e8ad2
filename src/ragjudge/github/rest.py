"""A small GitHub REST client: retries that follow GitHub's rules, and `Link` pagination.

Retried: 5xx and connection errors (backoff), and rate limits: a 403 or 429 whose
`retry-after` says how long to wait, or whose `x-ratelimit-remaining: 0` says to wait
until `x-ratelimit-reset`, or whose message names a secondary rate limit (then at
least a minute, as GitHub asks). A plain 403 ("Resource not accessible by
integration": a read-only token) is not retried. `sleep` and `clock` are injectable
so tests do not wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import requests

from ragjudge import __version__
from ragjudge.errors import ExitCode, RagjudgeError
from ragjudge.transport import urls
from ragjudge.transport.retry_after import parse_retry_after
from ragjudge.transport.sessions import CutOff, bounded_request, watched_session

PER_PAGE = 100
MAX_PAGES = 200
"""20,000 comments: a bound on a paginated walk, in case a server keeps saying `next`."""
MAX_WAIT_S = 900.0
"""A rate-limit wait longer than this is not waited out; the call fails instead."""


class GitHubError(RagjudgeError):
    """A GitHub API call failed (after retries); `status` is the HTTP status, 0 when none came back."""

    exit_code = ExitCode.COULD_NOT_EVALUATE

    def __init__(self, message: str, status: int = 0, tip: str | None = None) -> None:
        super().__init__(message, tip)
        self.status = status


class GitHubClient:
    """Calls `api_url` with a token; the token goes in the Authorization header, to `api_url`'s origin only.

    Every call is checked before it is sent (a URL from a reply, e.g. an artifact's `archive_download_url`, may
    name any host), and a redirect to another origin is followed without the header (as `requests` does).
    """

    def __init__(
        self,
        api_url: str,
        token: str,
        *,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        retries: int = 4,
        timeout_s: float = 30.0,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self._session = session or watched_session(trust_env=True)
        self._session.headers.update(
            {
                "Authorization": f"Bearer {token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": f"ragjudge/{__version__}",
            }
        )
        self._sleep = sleep
        self._clock = clock
        self.retries = retries
        self.timeout_s = timeout_s

    def url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else f"{self.api_url}/{path.lstrip('/')}"

    def request(self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None) -> Any:
        """The decoded JSON reply (None when empty); raises GitHubError."""
        return _decode(self._send(method, self.url(path), json, params))

    def paginate(self, path: str, params: dict[str, Any] | None = None, key: str | None = None) -> Iterator[Any]:
        """Each item of a list endpoint, following `Link: rel="next"`, 100 a page. `key`: the list is that
        field of each page's object (`workflow_runs`, `artifacts`), as the Actions endpoints answer."""
        url: str | None = self.url(path)
        query: dict[str, Any] | None = {**(params or {}), "per_page": PER_PAGE}
        for _ in range(MAX_PAGES):
            if url is None:
                return
            response = self._send("GET", url, None, query)
            page = _decode(response)
            if key is not None and isinstance(page, dict):
                page = page.get(key)
            if not isinstance(page, list):
                raise GitHubError(f"GET {_show(url)}: expected a list, got {type(page).__name__}", response.status_code)
            yield from page
            url = response.links.get("next", {}).get("url")
            query = None  # the next link carries the query
            if url is not None and not urls.same_origin(url, self.api_url):
                # Never send the token to another host, whatever a Link header says.
                raise GitHubError(f"pagination link leaves {urls.origin(self.api_url)}: {urls.origin(url)}")
            # (`_send` checks every URL too; this message names where the URL came from.)

    def redirect(self, path: str) -> str:
        """Where a download endpoint redirects to (GitHub answers 302 to its blob storage). The caller fetches
        that URL itself, without this client's headers: the token must never reach the storage host."""
        response = self._send("GET", self.url(path), None, None, allow_redirects=False)
        location = response.headers.get("location")
        if response.status_code not in (301, 302, 303, 307, 308) or not location:
            raise GitHubError(f"GET {_show(self.url(path))}: expected a redirect, got HTTP {response.status_code}")
        return str(location)

    def _send(
        self, method: str, url: str, body: Any, params: dict[str, Any] | None, allow_redirects: bool = True
    ) -> requests.Response:
        if not urls.same_origin(url, self.api_url):
            # The token is for the API: a URL from a reply that names another host is never called with it.
            raise GitHubError(f"{method} {urls.public_url(url)}: not on the API's origin {urls.origin(self.api_url)}")
        attempt = 0
        while True:
            attempt += 1
            try:
                # Not cut short by SIGINT/SIGTERM: posting the comment of a stopped run is how it is reported.
                response = bounded_request(
                    self._session,
                    method,
                    url,
                    self.timeout_s,
                    stoppable=False,
                    json=body,
                    params=params,
                    allow_redirects=allow_redirects,
                )
            except requests.RequestException as exc:
                if attempt > self.retries:
                    what = str(exc) if isinstance(exc, CutOff) else type(exc).__name__
                    raise GitHubError(
                        f"{method} {_show(url)}: {what} after {attempt} attempts",
                        tip="check GITHUB_API_URL and the network",
                    ) from None
                self._sleep(_backoff(attempt))
                continue
            if response.status_code < 400:
                return response
            wait = self._retry_wait(response, attempt)
            if wait is None or attempt > self.retries:
                raise _error(method, url, response, attempt)
            self._sleep(wait)

    def _retry_wait(self, response: requests.Response, attempt: int) -> float | None:
        """Seconds to wait before retrying, or None when this failure is not worth retrying."""
        status, headers = response.status_code, response.headers
        retry_after = parse_retry_after(headers.get("retry-after"), now=self._clock())
        if status >= 500:
            return retry_after if retry_after is not None else _backoff(attempt)
        if status not in (403, 429):
            return None
        if retry_after is not None:
            return _bounded(retry_after)
        reset = _number(headers.get("x-ratelimit-reset"))
        if headers.get("x-ratelimit-remaining") == "0" and reset is not None:
            return _bounded(max(reset - self._clock(), 0.0) + 1.0)
        if status == 429 or "rate limit" in _message(response).lower():
            return _bounded(60.0 * attempt)
        return None


def _error(method: str, url: str, response: requests.Response, attempts: int) -> GitHubError:
    status = response.status_code
    message = f"{method} {_show(url)}: HTTP {status} ({_message(response) or response.reason})"
    if attempts > 1:
        message += f" after {attempts} attempts"
    tip = None
    if status == 403:
        tip = "the token is read-only here (fork PRs, Dependabot); see the workflow_run example"
    elif status == 401:
        tip = "the token is invalid or expired"
    elif status == 404:
        tip = "check the repository, the PR number and the token's access"
    return GitHubError(message, status, tip)


def _decode(response: requests.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        raise GitHubError(f"{_show(response.url)}: reply is not JSON", response.status_code) from None


def _message(response: requests.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return ""
    return str(data.get("message", "")) if isinstance(data, dict) else ""


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _backoff(attempt: int) -> float:
    return float(min(2 ** (attempt - 1), 30))


def _bounded(seconds: float) -> float | None:
    return seconds if seconds <= MAX_WAIT_S else None


def _show(url: str) -> str:
    """The path of a URL, for messages (no host noise, no query); the whole URL shown safely when it has none."""
    return urls.path(url) or urls.public_url(url)
