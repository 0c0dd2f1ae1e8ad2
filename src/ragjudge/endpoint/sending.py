"""One attempt at the endpoint on the wire: the request sent on a shared pool of kept-alive connections, redirects
followed (`endpoint/redirects.py`), and the reply read within its bounds (`endpoint/receiving.py`), all under one
deadline for the whole attempt.

urllib3 is asked for one request at a time, with neither its retries nor its redirects: the attempts are the
client's, with its backoff and reasons, and each hop is checked here against the config.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import urllib3
from urllib3.exceptions import (
    ConnectTimeoutError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
    SSLError,
)

from ragjudge.config.endpoint_config import EndpointConfig
from ragjudge.endpoint import events, redirects, stream
from ragjudge.endpoint.attempt import AttemptFailed, Received, cut_off
from ragjudge.endpoint.excerpt import error_excerpt, header_secrets, mask
from ragjudge.endpoint.receiving import decode_json, error_cap, read_start, read_stream, read_whole
from ragjudge.transport import deadline, urls
from ragjudge.transport.pools import watched_pool
from ragjudge.transport.retry_after import parse_retry_after

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504}) | frozenset(range(505, 600))
"""The HTTP errors another attempt may cure."""
_ACCEPT_ENCODING = urllib3.util.make_headers(accept_encoding=True)["accept-encoding"]
"""What `requests` would offer: replies may come compressed, and are read decoded."""


class Sender:
    """Sends requests to the endpoint; safe to share between threads."""

    def __init__(self, config: EndpointConfig, assembly: Callable[[str], stream.Assembly]) -> None:
        """`assembly`: a stream's reader for its kind (`sse`, `ndjson`), by the config's protocol and mapping."""
        self.config = config
        self._assembly = assembly
        self._secrets = header_secrets(config.headers)
        # Shared by the calling threads; it keeps up to this many idle connections per host for reuse.
        self._http = watched_pool(maxsize=2 * max(config.concurrency, 16))

    def send(
        self, method: str, url: str, body: str | None, headers: dict[str, str], limit: deadline.Deadline
    ) -> urllib3.BaseHTTPResponse:
        """One request, its reply's body left unread; AttemptFailed when no reply arrives."""
        if not any(k.lower() == "accept-encoding" for k in headers):
            headers = {**headers, "Accept-Encoding": _ACCEPT_ENCODING}
        try:
            return self._http.urlopen(
                method,
                url,
                body=body.encode("utf-8") if body is not None else None,
                headers=headers,
                timeout=max(0.001, limit.remaining()),
                retries=False,  # the attempts are the client's, with its backoff and reasons
                redirect=False,  # followed by `redirects.follow`, which decides what a hop may carry
                preload_content=False,
            )
        # NewConnectionError is a ConnectTimeoutError to urllib3: a refusal, not a timeout, so it comes first.
        except (NewConnectionError, SSLError, ProtocolError, OSError) as exc:
            raise AttemptFailed("connection", _connection_detail(url, exc), retry=True) from None
        except (ConnectTimeoutError, ReadTimeoutError, TimeoutError):
            raise AttemptFailed("timeout", "timeout", retry=True) from None
        except (urllib3.exceptions.HTTPError, ValueError) as exc:
            raise AttemptFailed("request", f"request failed: {type(exc).__name__}", retry=False) from None

    def attempt(self, url: str, body: str | None, headers: dict[str, str], sent_at: float) -> Received:
        """One attempt, redirects included, under one deadline for the whole of it; AttemptFailed when it fails."""
        if deadline.stopped():
            raise AttemptFailed("interrupted", "interrupted", retry=False)
        with deadline.limit(self.config.timeout_s) as limit:
            try:
                response, method, url = redirects.follow(
                    self.send, self.config, self.config.method, url, body, headers, limit
                )
                with response:
                    return self._receive(response, method, url, limit, sent_at)
            except AttemptFailed:
                if limit.fired is not None:
                    raise cut_off(limit) from None
                raise

    def _receive(
        self, response: urllib3.BaseHTTPResponse, method: str, url: str, limit: deadline.Deadline, sent_at: float
    ) -> Received:
        """The final response read: an HTTP error with its excerpt, a stream event by event, or one JSON body."""
        if response.status >= 400:
            error_body = read_start(response, limit.expires, error_cap(self.config))
            raise AttemptFailed(
                "http",
                f"HTTP {response.status} from {method} {urls.public_url(url)}",
                retry=response.status in RETRY_STATUSES,
                retry_after=parse_retry_after(response.headers.get("Retry-After")),
                status=response.status,
                excerpt=mask(error_excerpt(error_body), self._secrets) or None,
                body=error_body,
            )
        try:
            kind = events.stream_kind(self.config.stream, response.headers.get("Content-Type"))
            if kind is not None:
                return read_stream(response, self._assembly(kind), limit, sent_at, self.config)
            raw = read_whole(response, self.config.max_response_bytes, limit.expires)
            done_at = time.monotonic()
            if limit.fired is not None:
                raise cut_off(limit)  # a cut-off body can look complete
            decoded = decode_json(raw, response.headers.get("Content-Type"))
            return Received(response.status, decoded, raw, done_at)
        except AttemptFailed as failure:
            failure.status = response.status
            raise


def _connection_detail(url: str, exc: Exception) -> str:
    host = urls.host_port(url) or "the endpoint"
    text = str(exc).lower()
    if "refused" in text:
        return f"connection refused by {host}"
    if "name or service not known" in text or "nodename nor servname" in text or "resolve" in text:
        return f"cannot resolve host {urls.host(url) or 'the endpoint'}"
    if "reset" in text or "aborted" in text or "remote end closed" in text:
        return f"connection to {host} closed without a reply"
    return f"cannot connect to {host}"
