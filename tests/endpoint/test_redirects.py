"""Redirects: not followed unless asked; never to another origin unless asked; never with headers or body."""

from __future__ import annotations

OK = {"answer": "ok", "retrieved": []}


def test_a_redirect_is_a_case_error_naming_the_location(serve, make_client, make_case):
    target = serve(lambda ex: ex.json({"answer": "the other origin's answer", "retrieved": []}))
    server = serve(lambda ex: ex.send(307, b"", headers={"Location": target.url}))
    result = make_client(server.url, headers={"X-Api-Key": "k-123456"}, retries=2).call(make_case())
    assert result.error == (
        f"endpoint error: HTTP 307 redirect to {target.url} (set endpoint.follow_redirects: true to follow it)"
    )
    assert result.attempts == 1
    assert target.requests == []


def test_following_refuses_another_origin(serve, make_client, make_case):
    target = serve(lambda ex: ex.json({"answer": "the other origin's answer", "retrieved": []}))
    server = serve(lambda ex: ex.send(307, b"", headers={"Location": target.url}))
    client = make_client(server.url, headers={"X-Api-Key": "k-123456"}, follow_redirects=True)
    result = client.call(make_case())
    assert result.error == (
        f"endpoint error: HTTP 307 redirect to another origin refused: {target.url} "
        "(set endpoint.allow_cross_origin: true to follow it)"
    )
    assert target.requests == []


def test_following_within_the_origin_keeps_method_body_and_headers(serve, make_client, make_case):
    def answer(ex):
        if ex.request.path == "/ask":
            ex.send(307, b"", headers={"Location": "/v2/ask"})
        else:
            ex.json(OK)

    server = serve(answer)
    client = make_client(server.url, headers={"X-Api-Key": "k-123456"}, follow_redirects=True)
    result = client.call(make_case(question="q?"))
    assert result.error is None
    hop = server.requests[1]
    assert (hop.method, hop.path) == ("POST", "/v2/ask")
    assert hop.headers["x-api-key"] == "k-123456"
    assert hop.json() == {"question": "q?"}


def test_an_allowed_cross_origin_hop_carries_no_custom_header_and_no_body(serve, make_client, make_case):
    target = serve(lambda ex: ex.json(OK))
    server = serve(lambda ex: ex.send(307, b"", headers={"Location": target.url}))
    client = make_client(server.url, headers={"X-Api-Key": "k-123456"}, follow_redirects=True, allow_cross_origin=True)
    result = client.call(make_case())
    assert result.error is None
    (hop,) = target.requests
    assert "x-api-key" not in hop.headers
    assert hop.body == b""
    assert server.requests[0].headers["x-api-key"] == "k-123456"


def test_303_becomes_a_get_without_the_body(serve, make_client, make_case):
    def answer(ex):
        if ex.request.path == "/ask":
            ex.send(303, b"", headers={"Location": "/result"})
        else:
            ex.json(OK)

    server = serve(answer)
    result = make_client(server.url, follow_redirects=True).call(make_case())
    assert result.error is None
    assert (server.requests[1].method, server.requests[1].body) == ("GET", b"")


def test_a_redirect_loop_ends(serve, make_client, make_case):
    server = serve(lambda ex: ex.send(302, b"", headers={"Location": "/ask"}))
    result = make_client(server.url, follow_redirects=True).call(make_case())
    assert result.error == "endpoint error: more than 5 redirects"
    assert len(server.requests) == 6


def test_a_redirect_location_is_named_without_its_credentials_query_or_fragment(serve, make_client, make_case):
    # A presigned URL carries its signature in the query; a Location may carry userinfo too.
    location = "http://ci-bot:s3cret-pass@elsewhere.example:8443/signed?X-Amz-Signature=sig-abcdef#frag"
    server = serve(lambda ex: ex.send(307, b"", headers={"Location": location}))
    result = make_client(server.url, retries=0).call(make_case())
    assert result.error == (
        "endpoint error: HTTP 307 redirect to http://elsewhere.example:8443/signed "
        "(set endpoint.follow_redirects: true to follow it)"
    )
