"""The one reading of a URL for display and origin checks: what is dropped, how a host and port are written."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

from ragjudge.transport import urls

SECRETS = ("s3cret", "tok-abc", "frag-xyz", "sk-123")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        # userinfo, query and fragment dropped
        ("https://user:s3cret@rag.example.com/ask?token=tok-abc#frag-xyz", "https://rag.example.com/ask"),
        ("https://s3cret@rag.example.com/ask", "https://rag.example.com/ask"),
        ("http://a%40b:s3cret@host/ask", "http://host/ask"),
        ("http://host/ask#frag-xyz", "http://host/ask"),
        ("http://host?token=tok-abc", "http://host"),
        # ports: the default one is not added, an explicit one is kept (its value, even 0, as written)
        ("https://host/ask", "https://host/ask"),
        ("https://host:443/ask", "https://host:443/ask"),
        ("http://127.0.0.1:8080/v1/ask", "http://127.0.0.1:8080/v1/ask"),
        ("http://host:0/ask", "http://host:0/ask"),
        # a port that is not one is dropped: here it is a key whose `@host` was forgotten
        ("http://key:sk-123/ask", "http://key/ask"),
        ("http://host:99999/ask", "http://host/ask"),
        # IPv6 in brackets, with or without a port
        ("http://[::1]:9000/ask?k=v", "http://[::1]:9000/ask"),
        ("http://u:s3cret@[2001:db8::1]/ask", "http://[2001:db8::1]/ask"),
        # the scheme and host lower-case, the path as written
        ("HTTPS://User:s3cret@Rag.Example.COM:8443/Ask", "https://rag.example.com:8443/Ask"),
        # no scheme: read as host and path, so userinfo still goes
        ("rag.example.com/ask?token=tok-abc", "rag.example.com/ask"),
        ("localhost:8080/ask", "localhost:8080/ask"),
        ("user:s3cret@host/ask", "host/ask"),
        ("//user:s3cret@host/ask", "host/ask"),
        # a reference without a host keeps its path
        ("/v2/ask?token=tok-abc", "/v2/ask"),
        ("http:///ask", "http:///ask"),
        # no URL at all
        ("", ""),
        (None, ""),
        # not a URL: a placeholder, never the text
        ("http://user:s3cret@[::1/ask?token=tok-abc", urls.UNPARSABLE),
        ("http://\uff03s3cret@host/", urls.UNPARSABLE),
    ],
)
def test_public_url(url: str | None, shown: str) -> None:
    assert urls.public_url(url) == shown


@pytest.mark.parametrize(
    ("url", "origin", "host_port", "host", "path"),
    [
        ("https://u:s3cret@Host.ex:8443/a?t=1", "https://host.ex:8443", "host.ex:8443", "host.ex", "/a"),
        ("https://host/ask", "https://host", "host", "host", "/ask"),
        ("http://[::1]:9000/ask", "http://[::1]:9000", "[::1]:9000", "::1", "/ask"),
        ("http://[::1]/", "http://[::1]", "[::1]", "::1", "/"),
        ("localhost:8080/ask", "localhost:8080", "localhost:8080", "localhost", "/ask"),
        ("/v2/ask", "", "", "", "/v2/ask"),
        ("http://[::1/ask", urls.UNPARSABLE, "", "", ""),
        (None, "", "", "", ""),
    ],
)  # fmt: skip
def test_the_other_views_read_the_same_parts(
    url: str | None, origin: str, host_port: str, host: str, path: str
) -> None:
    assert (urls.origin(url), urls.host_port(url), urls.host(url), urls.path(url)) == (origin, host_port, host, path)


def test_with_masked_query_keeps_the_query_but_masks_secret_looking_values() -> None:
    shown = urls.with_masked_query("http://u:s3cret@host/ask?q=refunds+please&api_key=tok-abc&Sig=x&n=1#frag-xyz")
    assert shown == "http://host/ask?q=refunds+please&api_key=***&Sig=***&n=1"
    assert urls.with_masked_query("http://host/ask") == "http://host/ask"
    assert urls.with_masked_query("http://host/ask?name=x", words=("name",)) == "http://host/ask?name=***"
    assert urls.with_masked_query("http://[::1/?token=tok-abc") == urls.UNPARSABLE


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("https://host/a", "https://host/b?x=1", True),
        ("https://host/a", "https://host:443/b", True),  # the default port, stated or not
        ("http://Host:80/a", "http://host/b", True),
        ("https://u:s3cret@host/a", "https://host/b", True),  # userinfo names no other place
        ("https://host/a", "http://host/a", False),
        ("https://host/a", "https://host:8443/a", False),
        ("https://host/a", "https://evil.example/a", False),
        ("http://[::1]:80/", "http://[::1]/", True),
        # no origin: matches nothing, itself included
        ("/v2/ask", "/v2/ask", False),
        ("http://[::1/", "http://[::1/", False),
        (None, None, False),
    ],
)
def test_same_origin(a: str | None, b: str | None, same: bool) -> None:
    assert urls.same_origin(a, b) is same
    assert urls.same_origin(b, a) is same


_URLISH = st.text(alphabet="htps:/[]@:?#%=&.0123456789abkey-_ \t\uff03é", max_size=40)


@given(st.one_of(_URLISH, st.text(max_size=40)))
def test_no_view_raises_on_any_text(text: str) -> None:
    for view in (urls.public_url, urls.origin, urls.host_port, urls.host, urls.path, urls.with_masked_query):
        assert isinstance(view(text), str)
    assert isinstance(urls.same_origin(text, text), bool)


@given(
    user=st.sampled_from(["", "u:", "ci-bot:"]),
    scheme=st.sampled_from(["http://", "https://", "//", ""]),
    host=st.sampled_from(["host", "127.0.0.1", "[::1]", "rag.example.com:8080"]),
    path=st.sampled_from(["", "/", "/ask", "/a/b"]),
)
def test_userinfo_query_and_fragment_never_show(user: str, scheme: str, host: str, path: str) -> None:
    url = f"{scheme}{user}s3cret@{host}{path}?token=tok-abc#frag-xyz"
    for view in (urls.public_url, urls.origin, urls.host_port, urls.host, urls.path):
        assert not any(secret in view(url) for secret in SECRETS), (view.__name__, url)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        # rendered as a template this sent to 127.0.0.2; as text urlsplit reads host 127.0.0.1, port 80
        ("http://127.0.0.1:{#/#}@127.0.0.2:8080/x", "a port that is not a number"),
        ("http://rag:8o/ask", "a port that is not a number"),
        ("http://rag:65536/ask", "a port that is not a number"),
        ("http://127.0.0.1@evil/", "user@"),
        ("http://rag;@evil/", "user@"),
        ("http://rag\\@evil/", "a backslash"),
        ("http://rag /ask", "spaces or control characters"),
        ("http://rag\t.evil/", "spaces or control characters"),
        ("http://rag\x00.svc/", "spaces or control characters"),
        ("http://evil\u3002svc/", "characters outside ASCII"),
        ("http://evil%2Esvc/", "a % in the host"),
        ("http://[::1/", "an unclosed ["),
        # nothing that reads two ways: a port, IPv6, a query or fragment holding `@`, `%` in the path
        ("http://rag.prod.svc:8080/ask", None),
        ("https://[::1]:9000/ask?to=a@b#@c", None),
        ("http://rag/ask%20me", None),
        ("http://rag:/ask", None),
    ],
)
def test_ambiguity_names_what_clients_may_read_as_another_host(url: str, reason: str | None) -> None:
    assert urls.ambiguity(url) == reason


_AUTHORITY_PIECES = (
    *("127.0.0.1", "127.0.0.2", "rag", ".svc", "evil", "::1", "80", "8080", "A", "0"),
    *(":", "@", "/", "\\", "#", "?", "%", "[", "]", "{", "}", "{#", "#}", ";", "&", "'", "<", "^", "`", "|", "~"),
    *("!", "$", "(", "*", "+", ",", "-", "_", "%2e", "%40", "%2F", "%25", " ", "\t", "\x00", "\x7f"),
    *("\u3002", "\uff0e"),
)


@settings(max_examples=500, deadline=None)
@given(
    scheme=st.sampled_from(["http://", "https://", "HTTP://"]),
    pieces=st.lists(st.sampled_from(_AUTHORITY_PIECES), max_size=8),
)
def test_a_url_without_ambiguity_is_called_where_origin_says(scheme: str, pieces: list[str]) -> None:
    # `serve` judges a caller's URL by its host as read here, and urllib3 (under the endpoint client and
    # `requests`) connects where it reads: the two must agree on every URL `ambiguity` lets through.
    url = scheme + "".join(pieces)
    if urls.ambiguity(url) is not None:
        return
    try:
        sent = parse_url(url)
    except LocationParseError:
        return  # urllib3 sends nothing at all
    if not sent.host:
        return  # nor without a host ("No host specified")
    port = f":{sent.port}" if sent.port is not None else ""
    assert urls.origin(url) == f"{sent.scheme}://{sent.host}{port}"


@pytest.mark.parametrize(
    "url",
    [
        "http://rag.example.com/ask",
        "https://rag.example.com:8443/v1",
        "HTTPS://Rag.Example.COM/ask",  # a scheme is read in any case
        "http://127.0.0.1:8080/ask?token=tok-abc",
        "http://[::1]:9000/ask",
        "http://user:s3cret@host/ask",  # userinfo is ambiguity's to judge, for a caller's URL
        "  http://host/ask  ",  # blanks around it are ignored, and the URL comes back as given
    ],
)
def test_check_http_url_returns_an_http_url_with_a_host_unchanged(url: str) -> None:
    assert urls.check_http_url(url) == url


@pytest.mark.parametrize(
    ("url", "found"),
    [
        ("127.0.0.1:8080/ask", "no scheme"),
        ("localhost:11434/v1", "no scheme"),
        ("", "no scheme"),
        ("/ask", "no scheme"),
        ("file:///etc/passwd", "a file:// URL"),
        ("ftp://example.org/ask", "a ftp:// URL"),
        ("http:///ask", "no host"),
        ("https://", "no host"),
        ("https://:8443/ask", "no host"),
        ("http://user:s3cret@/ask", "no host"),
        # urlsplit's own error quoted the netloc, and with it the password
        ("http://user:s3cret@[::1/ask", "a host that cannot be read"),
        ("http://user:s3cret\uff03x@host/ask", "a host that cannot be read"),
    ],
)
def test_check_http_url_says_what_is_wrong(url: str, found: str) -> None:
    with pytest.raises(ValueError) as caught:
        urls.check_http_url(url)
    assert str(caught.value) == f"must be an http:// or https:// URL with a host (found {found})"
    assert "s3cret" not in str(caught.value)
