"""A URL as it may be shown, and the origin it names: one reading of a URL for every message, report and check.

A URL that ragjudge calls may carry secrets outside its host and path: `user:password@` in the
authority, a token in the query (`?api_key=...`), sometimes in the fragment. Every place that shows
such a URL (an endpoint error, the report's provenance, a feedback or Prometheus source, a probe,
a GitHub API error, the judge's host in a fingerprint) takes one of the views below, all read by
one parser (`_split`), so they agree on what is dropped and on how a host and port are written:

- `public_url`: `scheme://host[:port]/path`; no userinfo, query or fragment.
- `origin`: `scheme://host[:port]`, the same without the path.
- `host_port`: `host[:port]`, for "connection refused by ...".
- `host`: the host alone (a judge's `base_url_host`, a redirect's target).
- `path`: the path alone (a GitHub API call named in an error).
- `with_masked_query`: `public_url` plus the query, every secret-looking parameter's value `***`
  (`ragjudge probe` shows the request it sends, and a GET's question is in the query).
- `same_origin`: whether two URLs name one origin, so a hop may carry the team's headers or token.
- `ambiguity`: what in a URL another client may read as another host or port (`user@`, a backslash, a
  port that is not a number, ...), for a URL from outside that decides which host is called.

And one check for a URL that ragjudge will call: `check_http_url`, an http(s) URL with a host
(`endpoint.url`, `--endpoint`, `judge.base_url`, `--judge-base-url`, the URLs a `serve` caller names).

Written the same way everywhere: the host lower-case (as `urlsplit` reads it), an IPv6 address in
brackets whenever a port may follow it (`host` alone leaves them off: no port follows, and a
fingerprint keeps the bare address it always had), a port only when the URL states one (`:443`
stays, none is added), and a port that is not a number dropped (in `http://key:sk-123/` the "port"
is a secret whose `@host` was forgotten). A URL typed without a scheme (`localhost:8080/ask`,
`user:pw@host/ask`) is read as a host and path, so its userinfo is still dropped. Nothing here
raises (but `check_http_url`): text that is not a URL shows as `UNPARSABLE` (and has no host).

This lives in `transport`, beside the sessions and pools, rather than in `ragjudge.masking`: masking
replaces registered secret values wherever they appear in any text, while these views take a
URL's structure apart, and one of them (`same_origin`) decides where a request may go. `transport`
is the floor every caller already stands on (endpoint, judge, canary, github, gate, commands),
and this module needs only `urllib.parse`, so reading a report stays light. `check_http_url` is the one
function here that raises: its ValueError is its answer, the way a pydantic validator refuses a value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple
from urllib.parse import parse_qsl, urlencode, urlsplit

UNPARSABLE = "(unparsable URL)"
"""What a text that cannot be read as a URL shows as: never the text itself (it may hold a token)."""

DEFAULT_PORTS = {"http": 80, "https": 443}

SECRET_QUERY_WORDS = ("key", "token", "secret", "password", "sig", "auth", "code")
"""A query parameter whose name holds one of these (any case) has its value masked by `with_masked_query`."""

# `scheme://` or `//` at the start: the URL says where its authority is. Anything else that does not
# start with `/` is taken to start with one (`host:8080/ask` would otherwise read as scheme `host`).
_AUTHORITY = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://|//")


class _Parts(NamedTuple):
    scheme: str
    """Lower-case; '' when the URL has none."""
    host: str
    """Lower-case, an IPv6 address without its brackets; '' when the URL names none."""
    port: int | None
    """As written; None when the URL states none or states one that is not a port number."""
    path: str
    query: str


def _split(url: str | None) -> _Parts | None:
    """The parts of `url` that may be shown (never its userinfo or fragment), or None when it is not a URL."""
    if url is None:
        return _Parts("", "", None, "", "")
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(_with_authority(url))
        host = parts.hostname or ""
    except ValueError:  # an unclosed `[`, a netloc that changes under NFKC normalisation
        return None
    try:
        port = parts.port
    except ValueError:  # out of range, or not a number
        port = None
    return _Parts(parts.scheme, host, port, parts.path, parts.query)


def _with_authority(url: str) -> str:
    text = url.lstrip()
    if text and not text.startswith("/") and not _AUTHORITY.match(text):
        text = "//" + text
    return text


def _host_port(parts: _Parts) -> str:
    host = f"[{parts.host}]" if ":" in parts.host else parts.host
    return f"{host}:{parts.port}" if parts.port is not None else host


def _origin(parts: _Parts) -> str:
    return f"{parts.scheme}://{_host_port(parts)}" if parts.scheme else _host_port(parts)


def public_url(url: str | None) -> str:
    """`scheme://host[:port]/path`: no user:password@, query or fragment (they may carry secrets)."""
    parts = _split(url)
    return UNPARSABLE if parts is None else _origin(parts) + parts.path


def origin(url: str | None) -> str:
    """`scheme://host[:port]`: where a URL points, for a message about leaving it."""
    parts = _split(url)
    return UNPARSABLE if parts is None else _origin(parts)


def host_port(url: str | None) -> str:
    """`host[:port]`, an IPv6 address in brackets; '' when the URL names no host or is not a URL."""
    parts = _split(url)
    return "" if parts is None or not parts.host else _host_port(parts)


def host(url: str | None) -> str:
    """The host alone, lower-case, an IPv6 address without brackets; '' when none can be read."""
    parts = _split(url)
    return "" if parts is None else parts.host


def path(url: str | None) -> str:
    """The path alone (no query, no fragment); '' when there is none or the text is not a URL."""
    parts = _split(url)
    return "" if parts is None else parts.path


def with_masked_query(url: str | None, words: Iterable[str] = SECRET_QUERY_WORDS) -> str:
    """`public_url` and the query, the value of each parameter whose name holds one of `words` shown as `***`."""
    parts = _split(url)
    if parts is None:
        return UNPARSABLE
    base = _origin(parts) + parts.path
    if not parts.query:
        return base
    lowered = tuple(word.lower() for word in words)
    pairs = [
        (name, "***" if any(word in name.lower() for word in lowered) else value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return f"{base}?{urlencode(pairs, safe='*')}"


def _origin_key(url: str | None) -> tuple[str, str, int | None] | None:
    parts = _split(url)
    if parts is None or not parts.scheme or not parts.host:
        return None
    port = parts.port if parts.port is not None else DEFAULT_PORTS.get(parts.scheme)
    return parts.scheme, parts.host, port


def same_origin(a: str | None, b: str | None) -> bool:
    """Whether `a` and `b` have one scheme, host and port (a default port counts as stated): where headers may go.

    A URL without a scheme or a host, or not a URL at all, has no origin and so matches nothing, itself included.
    """
    key = _origin_key(a)
    return key is not None and key == _origin_key(b)


def ambiguity(url: str) -> str | None:
    """What in `url` the HTTP client that sends it (urllib3, `requests`) may read as another host or port than
    `host` and `same_origin` do, or None when there is nothing: then they name the host that will be called.

    For a URL from outside (`ragjudge serve`'s callers) that an allow-list judges by its host. Parsers
    have disagreed on an authority with `user@` (which `@` ends it), a backslash (WHATWG reads it as `/`,
    `urlsplit` as part of the host), a port that is not a number (read here as no port, so as the
    default one: `http://a:{#/#}@b/` was host `a`, port 80 here), percent-encoding in the host (urllib3
    lowers `%2F` to `%2f`, `urlsplit` does not), and on whitespace, control characters and characters
    outside ASCII, which some drop or map before they split (`。` is a dot to IDNA).
    """
    if any(c.isspace() or not c.isprintable() for c in url):
        return "spaces or control characters"
    if not url.isascii():
        return "characters outside ASCII"
    if "\\" in url:
        return "a backslash"
    try:
        parts = urlsplit(_with_authority(url))
    except ValueError:
        return "an unclosed ["
    if "@" in parts.netloc:
        return "user@"
    if "%" in parts.netloc:
        return "a % in the host"
    try:
        parts.port  # noqa: B018 - read for the ValueError it raises
    except ValueError:
        return "a port that is not a number"
    return None


def check_http_url(url: str) -> str:
    """`url` unchanged when it is http(s) with a host, else a ValueError saying what is wrong.

    The reason never holds the URL (it may hold a token). The scheme is read in any case (`HTTPS://` is
    https), blanks around the URL are ignored, and userinfo, a port or a query are not judged here (a caller's
    URL that may name two hosts is `ambiguity`'s to refuse).
    """
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # an unclosed `[`, a netloc that changes under NFKC: urlsplit's message quotes the netloc
        raise ValueError("must be an http:// or https:// URL with a host (found a host that cannot be read)") from None
    if parts.scheme.lower() not in ("http", "https"):
        found = f"a {parts.scheme}:// URL" if parts.scheme and "://" in url else "no scheme"
        raise ValueError(f"must be an http:// or https:// URL with a host (found {found})")
    try:
        host_name = parts.hostname
    except ValueError:
        host_name = None
    if not host_name:
        raise ValueError("must be an http:// or https:// URL with a host (found no host)")
    return url
