"""Following an endpoint's redirects, within what the config allows.

A 3xx is followed only with `endpoint.follow_redirects`, and to another origin only with
`endpoint.allow_cross_origin`; every hop is judged against where the call began, not the hop before. Another
origin never sees the team's headers (tokens) or the body. A 303, and a 301 or 302 answering a POST, becomes
a GET without the body, as browsers and `requests` do. More than `MAX_REDIRECTS` hops end the attempt.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urljoin

import urllib3

from ragjudge.config.endpoint_config import EndpointConfig
from ragjudge.endpoint.attempt import AttemptFailed
from ragjudge.transport import deadline, urls

MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

Send = Callable[[str, str, "str | None", dict[str, str], deadline.Deadline], urllib3.BaseHTTPResponse]
"""One request, as `Sender.send` makes it: method, URL, body, headers, the attempt's deadline."""


def follow(
    send: Send,
    config: EndpointConfig,
    method: str,
    url: str,
    body: str | None,
    headers: dict[str, str],
    limit: deadline.Deadline,
) -> tuple[urllib3.BaseHTTPResponse, str, str]:
    """The response that is not a redirect (unread: the caller reads and closes it), with the method and URL
    that asked for it. Raises AttemptFailed for a redirect the config refuses, and past `MAX_REDIRECTS`."""
    start = url  # every hop is judged against where the call began, not the hop before
    for _ in range(MAX_REDIRECTS + 1):
        response = send(method, url, body, headers, limit)
        if response.status in REDIRECT_STATUSES and "Location" in response.headers:
            with response:
                method, url, body, headers = next_hop(config, response, method, url, body, headers, start)
            continue
        return response, method, url
    raise AttemptFailed("redirect", f"more than {MAX_REDIRECTS} redirects", retry=False)


def next_hop(
    config: EndpointConfig,
    response: urllib3.BaseHTTPResponse,
    method: str,
    url: str,
    body: str | None,
    headers: dict[str, str],
    start: str,
) -> tuple[str, str, str | None, dict[str, str]]:
    """Where a 3xx leads, and what may be sent there; refuses what the config does not allow."""
    status = response.status
    location = response.headers.get("Location", "")
    if not config.follow_redirects:
        raise AttemptFailed(
            "redirect",
            f"HTTP {status} redirect to {urls.public_url(location)} (set endpoint.follow_redirects: true to follow it)",
            retry=False,
            status=status,
        )
    target = urljoin(url, location)
    if status == 303 or (status in (301, 302) and method == "POST"):
        method, body = "GET", None  # what browsers and requests do
    if not urls.same_origin(target, start):
        if not config.allow_cross_origin:
            raise AttemptFailed(
                "redirect",
                f"HTTP {status} redirect to another origin refused: {urls.public_url(location)} "
                "(set endpoint.allow_cross_origin: true to follow it)",
                retry=False,
                status=status,
            )
        # Another origin never sees the team's headers (tokens) or the body.
        return method, target, None, {"Accept": "application/json", "User-Agent": "ragjudge"}
    if body is None:
        headers = {k: v for k, v in headers.items() if k != "Content-Type"}
    return method, target, body, headers
