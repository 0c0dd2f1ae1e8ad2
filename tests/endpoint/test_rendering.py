"""What is sent for each case: the body and URL rendered from the templates, the headers and the method; a
template that fails is the config's error naming the case."""

from __future__ import annotations

import json
import time

import pytest

from ragjudge.config.endpoint_config import EndpointConfig
from ragjudge.endpoint.client import EndpointClient
from ragjudge.errors import ConfigError

OK = {"answer": "Refunds take 7 days.", "refused": False, "confidence": "high"}


# --- what is sent --------------------------------------------------------------------------------


def test_default_body_sends_the_question_as_json(serve, make_client, make_case):
    server = serve(lambda ex: ex.json(OK))
    question = 'Can I return "gift" items? 赠品能退吗 </script>'
    result = make_client(server.url).call(make_case(question=question))

    assert result.error is None
    seen = server.requests[0]
    assert seen.method == "POST"
    assert seen.path == "/ask"
    assert seen.headers["content-type"] == "application/json"
    assert seen.headers["accept"] == "application/json"
    assert seen.json() == {"question": question}


def test_body_template_sees_question_and_case(serve, make_client, make_case):
    server = serve(lambda ex: ex.json(OK))
    body = (
        '{"query": {{ question | tojson }}, "meta": {"id": {{ case.id | tojson }}, '
        '"category": {{ case.category | tojson }}, "tags": {{ case.tags | tojson }}, '
        '"should_answer": {{ case.should_answer | tojson }}}}'
    )
    case = make_case(id="cs-007", question="发票怎么开？", category="发票", tags=("invoice", "zh"))
    result = make_client(server.url, body=body).call(case)

    assert result.error is None
    assert server.requests[0].json() == {
        "query": "发票怎么开？",
        "meta": {"id": "cs-007", "category": "发票", "tags": ["invoice", "zh"], "should_answer": True},
    }


def test_template_error_is_a_config_error_naming_the_case(serve, make_client, make_case):
    server = serve(lambda ex: ex.json(OK))
    client = make_client(server.url, body='{"q": {{ questoin | tojson }}}')
    with pytest.raises(ConfigError) as info:
        client.call(make_case(id="cs-042"))

    assert info.value.message == "endpoint.body: template failed for case 'cs-042': 'questoin' is undefined"
    assert info.value.tip == (
        "the template sees `question`, `case` (id, question, expected, category, tags, ...), `messages`, `history`, "
        "`turn`, `conversation_id` and `model`"
    )
    assert server.requests == []


def test_a_single_question_is_a_conversation_of_one_turn_to_the_template(make_client, make_case):
    body = (
        '{"m": {{ model | tojson }}, "messages": {{ messages | tojson }}, "history": {{ history | tojson }}, '
        '"turn": {{ turn }}, "cid": {{ conversation_id | tojson }}}'
    )
    client = make_client("http://127.0.0.1:9/ask", body=body, model="rag")
    _, rendered = client.render(make_case(question="Who pays shipping?"))
    assert rendered is not None and json.loads(rendered) == {
        "m": "rag",
        "messages": [{"role": "user", "content": "Who pays shipping?"}],
        "history": [],
        "turn": 1,
        "cid": None,
    }


def test_template_runtime_error_is_a_config_error_naming_the_case(serve, make_client, make_case):
    server = serve(lambda ex: ex.json(OK))
    client = make_client(server.url, body='{"n": {{ case.tags | length // 0 }}}')
    with pytest.raises(ConfigError) as info:
        client.call(make_case(id="cs-1"))
    assert info.value.message == (
        "endpoint.body: template failed for case 'cs-1': ZeroDivisionError: integer division or modulo by zero"
    )
    assert server.requests == []


def test_url_template_error_names_the_url_key(make_client, make_case):
    client = make_client("http://127.0.0.1:9/ask/{{ case.nope }}")
    with pytest.raises(ConfigError) as info:
        client.call(make_case(id="cs-2"))
    assert info.value.message == "endpoint.url: template failed for case 'cs-2': 'dict object' has no attribute 'nope'"


def test_template_is_sandboxed(serve, make_client, make_case):
    server = serve(lambda ex: ex.json(OK))
    client = make_client(server.url, body="{{ case.__class__.__mro__ }}")
    with pytest.raises(ConfigError) as info:
        client.call(make_case(id="cs-9"))
    assert info.value.message.startswith("endpoint.body: template failed for case 'cs-9': ")
    assert server.requests == []


def test_template_syntax_error_is_reported_when_the_client_is_built(make_client):
    with pytest.raises(ConfigError) as info:
        make_client("http://127.0.0.1:9/ask", body='{"q": {{ question | tojson }')
    assert info.value.message.startswith("endpoint.body: invalid template: ")


def test_headers_are_sent(serve, make_client, make_case):
    server = serve(lambda ex: ex.json(OK))
    make_client(server.url, headers={"Authorization": "Bearer tok-123456", "X-Tenant": "acme"}).call(make_case())

    headers = server.requests[0].headers
    assert headers["authorization"] == "Bearer tok-123456"
    assert headers["x-tenant"] == "acme"
    assert headers["user-agent"] == "ragjudge"


def test_get_sends_no_body_and_renders_the_url(serve, make_client, make_case):
    server = serve(lambda ex: ex.json(OK))
    url = server.url + "?q={{ question | urlencode }}&id={{ case.id }}"
    result = make_client(url, method="GET").call(make_case(id="c-3", question="退款 多久?"))

    assert result.error is None
    seen = server.requests[0]
    assert seen.method == "GET"
    assert seen.body == b""
    assert "content-type" not in seen.headers
    assert seen.path == "/ask?q=%E9%80%80%E6%AC%BE%20%E5%A4%9A%E4%B9%85%3F&id=c-3"


def test_put_method(serve, make_client, make_case):
    server = serve(lambda ex: ex.json(OK))
    make_client(server.url, method="put").call(make_case())
    assert server.requests[0].method == "PUT"


SPIN = "{%for(a)in(range(99999))%}{%for(b)in(range(99999))%}{%endfor%}{%endfor%}"
"""Ten billion loop turns that output nothing, so no size limit stops them: a core spun without end if rendered."""


def test_a_literal_url_is_sent_as_written_never_rendered(serve, make_case):
    # `ragjudge serve` sends a caller's URL this way (issue 27, item 1): template syntax in it is text.
    server = serve(lambda ex: ex.json(OK))
    started = time.monotonic()
    client = EndpointClient(EndpointConfig(retries=0), f"{server.url}/{{{{question}}}}/{SPIN}", literal_url=True)
    assert client.render(make_case())[0] == f"{server.url}/{{{{question}}}}/{SPIN}"
    assert client.call(make_case()).error is None
    assert time.monotonic() - started < 1
    # urllib3 percent-encodes the braces and `%` it is given; nothing was rendered.
    assert [r.path for r in server.requests] == [
        "/ask/%7B%7Bquestion%7D%7D/%7B%25for(a)in(range(99999))%25%7D%7B%25for(b)in(range(99999))%25%7D"
        "%7B%25endfor%25%7D%7B%25endfor%25%7D"
    ]
    # The same text as the config's template is rendered: the literal flag is what keeps it text.
    rendered = EndpointClient(EndpointConfig(retries=0), f"{server.url}/{{{{question}}}}")
    assert rendered.render(make_case())[0] == f"{server.url}/How%20do%20I%20get%20a%20refund%3F"
