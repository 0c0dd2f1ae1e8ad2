"""Prove the fakes behave: FakeOpenAI through the real ``openai`` SDK, FakeGitHub through ``requests``."""

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import openai
import pytest
import requests

from tests.fakes import FakeGitHub, FakeOpenAI, Reply, queue, rate_limited_once, reject_json_schema
from tests.fakes.ai_sdk_server import require_app
from tests.fakes.github_server import MAX_COMMENT_LENGTH, NOT_ACCESSIBLE, SECONDARY_RATE_LIMIT_MESSAGE
from tests.fakes.openai_server import JSON_SCHEMA_UNSUPPORTED

MSGS: list[Any] = [{"role": "user", "content": "hi"}]
SCHEMA_RF: Any = {"type": "json_schema", "json_schema": {"name": "v", "schema": {"type": "object"}}}


def chat(client: openai.OpenAI, **kw: Any) -> Any:
    return client.chat.completions.create(model=kw.pop("model", "gpt-4o-mini"), messages=MSGS, **kw)


# ---------------------------------------------------------------------------------------------- OpenAI
def test_openai_normal_call_parses_and_is_recorded(fake_openai: FakeOpenAI) -> None:
    assert fake_openai.url.startswith("http://127.0.0.1:")
    fake_openai.responder = Reply(content='{"score": 4}', usage=(11, 3))
    resp = chat(fake_openai.client(api_key="sk-test-abc"), model="gpt-4o", temperature=0)
    assert resp.id.startswith("chatcmpl-") and resp.object == "chat.completion" and resp.model == "gpt-4o"
    assert isinstance(resp.created, int)
    [choice] = resp.choices
    assert (choice.index, choice.finish_reason) == (0, "stop")
    assert choice.message.role == "assistant" and choice.message.content == '{"score": 4}'
    assert resp.usage is not None
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens, resp.usage.total_tokens) == (11, 3, 14)
    [rec] = fake_openai.requests
    assert rec["method"] == "POST" and rec["path"] == "/v1/chat/completions"
    assert rec["body"]["model"] == "gpt-4o" and rec["body"]["messages"] == MSGS
    assert rec["headers"]["authorization"] == "Bearer sk-test-abc"
    assert fake_openai.bodies == [rec["body"]] and fake_openai.call_count == 1


def test_openai_default_reply_and_n_choices(fake_openai: FakeOpenAI) -> None:
    client = fake_openai.client()
    assert chat(client).choices[0].message.content == "ok"
    resp = chat(client, n=3)
    assert [c.index for c in resp.choices] == [0, 1, 2]
    assert {c.message.content for c in resp.choices} == {"ok"}
    fake_openai.responder = Reply(choices=["a", "b"])
    assert [c.message.content for c in chat(client, n=3).choices] == ["a", "b", "a"]


def test_openai_queue_in_order_then_repeats_last_and_call_index(fake_openai: FakeOpenAI) -> None:
    seen: list[int] = []
    inner = queue(Reply(content="one"), Reply(content=None, finish_reason="length"), Reply(content="last"))

    def responder(body: dict[str, Any], call_index: int) -> Reply:
        seen.append(call_index)
        return inner(body, call_index)

    fake_openai.responder = responder
    client = fake_openai.client()
    got = [(c.message.content, c.finish_reason) for c in (chat(client).choices[0] for _ in range(5))]
    assert got == [("one", "stop"), (None, "length"), ("last", "stop"), ("last", "stop"), ("last", "stop")]
    assert seen == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError):
        queue()


def test_openai_429_retry_after_is_retried_by_sdk(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = rate_limited_once(then=Reply(content="after"))  # Retry-After: 1
    t0 = time.monotonic()
    resp = chat(fake_openai.client(max_retries=2))
    assert resp.choices[0].message.content == "after"
    assert time.monotonic() - t0 >= 0.9  # the SDK honoured Retry-After: 1
    assert fake_openai.call_count == 2
    assert fake_openai.requests[1]["headers"].get("x-stainless-retry-count") == "1"


def test_openai_429_surfaces_header_without_retries(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = rate_limited_once(retry_after="7")
    with pytest.raises(openai.RateLimitError) as ei:
        chat(fake_openai.client(max_retries=0))
    assert ei.value.response.headers["retry-after"] == "7" and ei.value.code == "rate_limit_exceeded"
    assert chat(fake_openai.client(max_retries=0)).choices[0].message.content == "ok"  # only once


def test_openai_401_raises_authentication_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = Reply(status=401)
    with pytest.raises(openai.AuthenticationError) as ei:
        chat(fake_openai.client(max_retries=3))
    assert ei.value.code == "invalid_api_key" and fake_openai.call_count == 1  # not retried
    with FakeOpenAI(api_key="sk-test-right") as strict:
        with pytest.raises(openai.AuthenticationError):
            chat(strict.client(api_key="sk-test-wrong"))
        assert chat(strict.client(api_key="sk-test-right")).choices[0].message.content == "ok"


def test_openai_json_schema_rejected_with_bad_request(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = reject_json_schema(then=Reply(content='{"v": 1}'))
    client = fake_openai.client(max_retries=2)
    with pytest.raises(openai.BadRequestError) as ei:
        chat(client, response_format=SCHEMA_RF)
    assert ei.value.status_code == 400 and ei.value.body == JSON_SCHEMA_UNSUPPORTED
    assert ei.value.param == "response_format" and ei.value.code is None
    assert chat(client, response_format={"type": "json_object"}).choices[0].message.content == '{"v": 1}'
    assert chat(client).choices[0].message.content == '{"v": 1}'
    assert fake_openai.call_count == 3


def test_openai_custom_errors_headers_5xx_retry(fake_openai: FakeOpenAI) -> None:
    inner = {"message": "nope", "type": "invalid_request_error", "param": None, "code": "context_length_exceeded"}
    fake_openai.responder = Reply(status=400, error=inner, headers={"x-custom": "1"})
    with pytest.raises(openai.BadRequestError) as ei:
        chat(fake_openai.client())
    assert ei.value.code == "context_length_exceeded" and ei.value.response.headers["x-custom"] == "1"
    fast = {"retry-after-ms": "10"}
    fake_openai.responder = queue(
        Reply(status=500, headers=fast), Reply(status=503, headers=fast), Reply(content="fine")
    )
    assert chat(fake_openai.client(max_retries=2)).choices[0].message.content == "fine"
    raw = fake_openai.client().chat.completions.with_raw_response.create(model="m", messages=MSGS)
    assert raw.headers["x-request-id"].startswith("req_")


def test_openai_delay_triggers_client_timeout(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = Reply(content="slow", delay_s=1.0)
    with pytest.raises(openai.APITimeoutError):
        chat(fake_openai.client(max_retries=0, timeout=0.2))


def test_openai_concurrent_requests_and_other_routes(fake_openai: FakeOpenAI) -> None:
    client = fake_openai.client()
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: chat(client, seed=i).choices[0].message.content, range(24)))
    assert results == ["ok"] * 24
    assert fake_openai.call_count == 24 and len(fake_openai.requests) == 24
    assert sorted(b["seed"] for b in fake_openai.bodies) == list(range(24))
    assert [m.id for m in client.models.list()] == ["gpt-4o-mini"]
    r = requests.post(f"{fake_openai.base_url}/embeddings", json={}, headers={"Authorization": "Bearer x"})
    assert r.status_code == 404 and "error" in r.json()
    assert requests.post(f"{fake_openai.base_url}/chat/completions", json={}).status_code == 401
    fake_openai.reset()
    assert fake_openai.requests == [] and fake_openai.call_count == 0


def test_openai_stream_true_answers_in_sse_chunks(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = Reply(content="Refunds take 14 days. [refund-policy]", usage=(7, 3))
    messages: Any = [{"role": "user", "content": "hi"}]
    stream = fake_openai.client(max_retries=0).chat.completions.create(
        model="gpt-4o-mini", messages=messages, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "Refunds take 14 days. [refund-policy]"
    )
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 10
    assert fake_openai.bodies[0]["stream"] is True


def test_openai_reasoning_streams_before_the_content_and_sits_on_the_plain_message(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = Reply(content="Refunds take 14 days.", reasoning="The refund document says so.")
    chunks = list(chat(fake_openai.client(max_retries=0), stream=True))
    deltas = [c.choices[0].delta.model_dump(exclude_none=True) for c in chunks if c.choices]
    assert deltas[1:] == [
        {"reasoning_content": "The "},
        {"reasoning_content": "refund "},
        {"reasoning_content": "document "},
        {"reasoning_content": "says "},
        {"reasoning_content": "so."},
        {"content": "Refunds "},
        {"content": "take "},
        {"content": "14 "},
        {"content": "days."},
        {},
    ]
    message = chat(fake_openai.client()).choices[0].message
    assert message.content == "Refunds take 14 days."
    assert message.model_dump()["reasoning_content"] == "The refund document says so."


def test_openai_cut_stream_stops_mid_delta_and_never_ends_its_body(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = Reply(content="Refunds are issued within 14 days.", cut_after_chars=20)
    body = {"model": "m", "messages": MSGS, "stream": True}
    auth = {"Authorization": "Bearer sk-test"}
    with requests.post(f"{fake_openai.base_url}/chat/completions", json=body, headers=auth, stream=True) as r:
        assert r.headers["Transfer-Encoding"] == "chunked"
        received = b""
        with pytest.raises(requests.exceptions.ChunkedEncodingError):
            for part in r.iter_content(None):
                received += part
    events = [line[6:] for line in received.decode().split("\n\n") if line]
    assert [json.loads(e)["choices"][0]["delta"] for e in events] == [
        {"role": "assistant", "content": ""},
        {"content": "Refunds "},
        {"content": "are "},
        {"content": "issued "},
        {"content": "w"},
    ]
    stream = chat(fake_openai.client(max_retries=0), stream=True)
    with pytest.raises(openai.APIError):
        list(stream)


def test_openai_lifecycle() -> None:
    fake = FakeOpenAI()
    with pytest.raises(RuntimeError):
        _ = fake.url
    with fake:
        assert chat(fake.client()).choices[0].message.content == "ok"
    with pytest.raises(RuntimeError):
        _ = fake.url


def test_ai_sdk_app_missing_skips_but_fails_under_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="the AI SDK app is not installed"):
        require_app(tmp_path)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="under CI the AI SDK tests must run, not skip"):
        require_app(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.fail.Exception, match="node is not installed"):
        require_app(tmp_path)


# ---------------------------------------------------------------------------------------------- GitHub
AUTH = {"Authorization": "Bearer ghs_test", "Accept": "application/vnd.github+json"}


def gh(method: str, url: str, **kw: Any) -> requests.Response:
    return requests.request(method, url, headers=kw.pop("headers", AUTH), timeout=5, **kw)


def test_github_auth_required_and_recorded(fake_github: FakeGitHub) -> None:
    url = f"{fake_github.url}/repos/o/r/issues/1/comments"
    r = gh("GET", url, headers={})
    assert r.status_code == 401 and r.json()["message"] == "Requires authentication"
    assert gh("GET", url, headers={"Authorization": "Basic abc"}).status_code == 401
    assert gh("GET", url).status_code == 200
    assert gh("GET", url, headers={"Authorization": "token ghp_x"}).status_code == 200
    methods = [(m, p, h.get("authorization")) for m, p, h in fake_github.requests]
    assert methods[-2:] == [
        ("GET", "/repos/o/r/issues/1/comments", "Bearer ghs_test"),
        ("GET", "/repos/o/r/issues/1/comments", "token ghp_x"),
    ]
    with FakeGitHub(token="right") as strict:
        bad = gh("GET", f"{strict.url}/repos/o/r/issues/1/comments", headers={"Authorization": "token no"})
        assert bad.status_code == 401 and bad.json()["message"] == "Bad credentials"


def test_github_user_endpoint(fake_github: FakeGitHub) -> None:
    r = gh("GET", f"{fake_github.url}/user")
    assert r.status_code == 403 and r.json()["message"] == NOT_ACCESSIBLE
    with FakeGitHub(user_forbidden=False, token_login="ragbot") as open_user:
        assert gh("GET", f"{open_user.url}/user").json()["login"] == "ragbot"


@pytest.mark.parametrize("id_links", [False, True])
def test_github_pagination_follows_link_headers(id_links: bool) -> None:
    with FakeGitHub(repository_id_links=id_links) as fake:
        fake.seed_comments(42, 120, body_fn=lambda i: f"c{i}")
        url: str | None = f"{fake.url}/repos/o/r/issues/42/comments?per_page=100"
        bodies: list[str] = []
        links: list[str] = []
        while url:
            r = gh("GET", url)
            assert r.status_code == 200
            bodies += [c["body"] for c in r.json()]
            links.append(r.headers.get("Link", ""))
            url = r.links.get("next", {}).get("url")
        assert bodies == [f"c{i}" for i in range(120)]
        assert len(links) == 2
        path = "/repositories/123456789" if id_links else "/repos/o/r"
        page2 = f"<{fake.url}{path}/issues/42/comments?per_page=100&page=2>"
        assert links[0] == f'{page2}; rel="next", {page2}; rel="last"'
        assert 'rel="prev"' in links[1] and 'rel="first"' in links[1] and 'rel="next"' not in links[1]
        default = gh("GET", f"{fake.url}/repos/o/r/issues/42/comments")  # per_page defaults to 30
        assert len(default.json()) == 30 and default.links["last"]["url"].endswith("page=4")
        assert gh("GET", f"{fake.url}/repos/o/r/issues/42/comments?page=9").json() == []
        empty = gh("GET", f"{fake.url}/repos/o/r/issues/7/comments?per_page=100")
        assert empty.json() == [] and "Link" not in empty.headers


def test_github_create_update_and_errors(fake_github: FakeGitHub) -> None:
    base = f"{fake_github.url}/repos/o/r/issues"
    r = gh("POST", f"{base}/5/comments", json={"body": "hello <!-- marker -->"})
    assert r.status_code == 201
    c = r.json()
    assert c["body"] == "hello <!-- marker -->" and c["user"]["login"] == "github-actions[bot]"
    assert c["html_url"].endswith(f"/pull/5#issuecomment-{c['id']}") and isinstance(c["id"], int)
    assert fake_github.comments[5][0]["id"] == c["id"]
    assert fake_github.request_bodies[-1] == {"body": "hello <!-- marker -->"}
    r = gh("PATCH", f"{base}/comments/{c['id']}", json={"body": "v2"})
    assert r.status_code == 200 and r.json()["body"] == "v2" and fake_github.comments[5][0]["body"] == "v2"
    assert gh("PATCH", f"{base}/comments/999", json={"body": "x"}).status_code == 404
    assert gh("POST", f"{base}/5/comments", json={}).status_code == 422
    assert gh("DELETE", f"{base}/comments/{c['id']}").status_code == 204 and fake_github.comments[5] == []


def test_github_body_length_limit(fake_github: FakeGitHub) -> None:
    url = f"{fake_github.url}/repos/o/r/issues/3/comments"
    ok = gh("POST", url, json={"body": "x" * MAX_COMMENT_LENGTH})
    assert ok.status_code == 201
    too_long = gh("POST", url, json={"body": "é" * (MAX_COMMENT_LENGTH + 1)})
    assert too_long.status_code == 422
    err = too_long.json()
    assert err["message"] == "Validation Failed"
    assert err["errors"][0] == {
        "resource": "IssueComment",
        "code": "custom",
        "field": "body",
        "message": "body is too long (maximum is 65536 characters)",
    }
    patch = gh("PATCH", f"{fake_github.url}/repos/o/r/issues/comments/{ok.json()['id']}", json={"body": "y" * 70000})
    assert patch.status_code == 422 and len(fake_github.comments[3]) == 1


def test_github_fault_injection(fake_github: FakeGitHub) -> None:
    url = f"{fake_github.url}/repos/o/r/issues/9/comments"
    fake_github.fail_next("POST", 502, count=2)
    assert gh("GET", url).status_code == 200  # other methods unaffected
    assert [gh("POST", url, json={"body": "b"}).status_code for _ in range(3)] == [502, 502, 201]
    fake_github.fail_next("POST", 403)
    r = gh("POST", url, json={"body": "b"})
    assert r.status_code == 403 and r.json()["message"] == NOT_ACCESSIBLE and "documentation_url" in r.json()
    fake_github.fail_next("*", 500, headers={"x-extra": "y"}, body={"message": "boom"}, path_contains="/user")
    assert gh("GET", url).status_code == 200
    r = gh("GET", f"{fake_github.url}/user")
    assert (r.status_code, r.json(), r.headers["x-extra"]) == (500, {"message": "boom"}, "y")
    fake_github.fail_secondary_rate_limit("PATCH", retry_after="1")
    cid = fake_github.comments[9][0]["id"]
    r = gh("PATCH", f"{fake_github.url}/repos/o/r/issues/comments/{cid}", json={"body": "z"})
    assert r.status_code == 403 and r.headers["retry-after"] == "1"
    assert r.json()["message"] == SECONDARY_RATE_LIMIT_MESSAGE
    assert r.json()["message"].startswith("You have exceeded a secondary rate limit")
    assert gh("PATCH", f"{fake_github.url}/repos/o/r/issues/comments/{cid}", json={"body": "z"}).status_code == 200


def test_github_seed_and_concurrent_creates(fake_github: FakeGitHub) -> None:
    seeded = fake_github.seed_comments(1, 3, author="alice")
    assert [c["user"]["login"] for c in seeded] == ["alice"] * 3 and seeded[0]["body"] == "comment 0"
    url = f"{fake_github.url}/repos/o/r/issues/1/comments"
    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(lambda i: gh("POST", url, json={"body": f"p{i}"}).status_code, range(20)))
    assert codes == [201] * 20
    ids = [c["id"] for c in fake_github.comments[1]]
    assert len(ids) == 23 == len(set(ids))
    assert gh("GET", f"{fake_github.url}/nope").status_code == 404
