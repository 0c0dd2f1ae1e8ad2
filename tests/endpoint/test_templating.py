"""The request templates' sandbox is bounded in size (`endpoint.max_request_bytes`): a template that would
render or build more stops before it does, as a config error naming the key, the case and the limit."""

from __future__ import annotations

import tracemalloc
from dataclasses import replace

import pytest
from jinja2 import StrictUndefined

from ragjudge.cases.case import Exchange
from ragjudge.endpoint.dialogue import TurnOutgrown
from ragjudge.endpoint.templating import BoundedSandbox, RenderTooLarge
from ragjudge.errors import ConfigError

OK = {"answer": "a", "retrieved": []}
CAP = 1_000_000
HOSTILE = [
    '{{ "a" * 300000000 }}',
    '{{ 300000000 * "a" }}',
    '{{ ["a"] * 300000000 }}',
    '{{ ("a" * 900000) + ("a" * 900000) }}',
    "{{ 10 ** 100000000 }}",
    '{{ "%300000000s" % "a" }}',
    '{{ "%*s" % (300000000, "a") }}',
    '{{ "{:300000000}".format("a") }}',
    '{{ "{:{}}".format("a", 300000000) }}',
    '{{ "a".ljust(300000000) }}',
    '{{ "a" | center(300000000) }}',
    '{{ "%300000000s" | format("a") }}',
    '{{ range(100000) | join("a" * 1000) }}',
    '{{ ("a" * 100000) | replace("a", "b" * 1000) }}',
    '{{ ("a" * 100000).replace("a", "b" * 1000) }}',
    '{{ ("a" * 1000).join(["x"] * 100000) }}',
    '{{ [1] | batch(300000000, "x") | list }}',
    '{{ ("\\n" * 100000) | indent(1000) }}',
    '{% for i in range(100000) %}{{ "a" * 1000 }}{% endfor %}',
    '{% set ns = namespace(s="a") %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}',
    '{% macro f(s, n) %}{{ f(s ~ s, n - 1) if n else s }}{% endmacro %}{{ f("a", 40) }}',
]


@pytest.mark.parametrize("template", HOSTILE)
def test_a_template_that_would_grow_past_the_limit_stops_early(template: str) -> None:
    env = BoundedSandbox(CAP, undefined=StrictUndefined, autoescape=False)
    tracemalloc.start()
    try:
        with pytest.raises(RenderTooLarge) as refused:
            env.render(env.from_string(template), {"question": "q"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert refused.value.limit == CAP
    assert peak < 12 * CAP  # stopped near the limit, never the 100 MB+ the template asks for


def test_ordinary_templates_render_as_before() -> None:
    env = BoundedSandbox(CAP, undefined=StrictUndefined, autoescape=False)
    template = (
        '{"q": {{ question | tojson }}, "tags": {{ tags | join(",") | tojson }}, "n": {{ ("%03d" % 7) | tojson }}, '
        '"up": {{ question.upper() | tojson }}, "w": {{ "{:>5}".format("x") | tojson }},'
        ' "r": {{ ("ab" * 2) | tojson }}}'
    )
    assert env.render(env.from_string(template), {"question": "q?", "tags": ["a", "b"]}) == (
        '{"q": "q?", "tags": "a,b", "n": "007", "up": "Q?", "w": "    x", "r": "abab"}'
    )
    assert env.render(env.from_string("{{ 'a' * 1000000 }}"), {}) == "a" * CAP  # exactly the limit is allowed
    # Large numbers are values, not sizes, unless they are a width or a count.
    values = (
        "{{ '{\"ts\": %d}' % 1733100000 }} {{ '%d' | format(1733100000) }} {{ '{}'.format(1733100000) }} "
        "{{ '%05.1f' % 2.5 }} {{ '{:>4}'.format(7) }} {{ 'x' | center(3) }}|"
    )
    assert env.render(env.from_string(values), {}) == '{"ts": 1733100000} 1733100000 1733100000 002.5    7  x |'


@pytest.mark.parametrize(
    ("key", "setting"),
    [("endpoint.body", {"body": '{"q": "{{ "a" * 300000000 }}"}'}), ("endpoint.url", {"url": "/{{ 'a' * 2001 }}"})],
)
def test_the_client_names_the_key_the_case_and_the_limit(serve, make_client, make_case, key, setting) -> None:
    server = serve(lambda ex: ex.json(OK))
    url = server.url + setting.pop("url", "")
    limit = 2000 if key == "endpoint.url" else 1_000_000
    client = make_client(url, **setting, **({"max_request_bytes": limit} if key == "endpoint.url" else {}))
    with pytest.raises(ConfigError) as info:
        client.call(make_case(id="cs-7"))
    assert info.value.message == (
        f"{key}: the template renders over {limit:,} bytes for case 'cs-7' "
        f"(endpoint.max_request_bytes: {limit:,}); rendering was stopped there"
    )
    assert info.value.tip is not None and "endpoint.max_request_bytes" in info.value.tip
    assert server.requests == []


@pytest.mark.parametrize(
    ("key", "setting"),
    [
        ("endpoint.body", {"body": '{"messages": {{ messages | tojson }}}'}),
        ("endpoint.url", {"method": "GET", "url": "?history={{ history | tojson }}"}),
    ],
)
def test_a_turn_the_answers_grew_past_the_limit_is_its_error_not_sent(
    serve, make_client, make_case, key, setting
) -> None:
    server = serve(lambda ex: ex.json(OK))
    client = make_client(server.url + setting.pop("url", ""), **setting, max_request_bytes=2000)
    earlier = (Exchange("a?", "x" * 1200), Exchange("b?", "y" * 1200))
    turn = make_case(id="chat turn 3", question="c?", turn=3, history=earlier)
    result = client.call(turn)
    assert (result.trace, result.attempts, result.status) == (None, 0, None)
    assert result.error == (
        f"endpoint error: not sent: {key} renders over 2,000 bytes with the conversation's 2 earlier answers "
        "(endpoint.max_request_bytes: 2,000)"
    )
    with pytest.raises(TurnOutgrown) as outgrown:
        client.render(turn)  # `probe` renders each turn itself
    assert outgrown.value.reason == result.error
    # The same turn as rendered before any call, its answers empty, fits: its questions alone are not too large.
    assert client.render(replace(turn, history=tuple(replace(e, answer="") for e in earlier)))
    assert server.requests == []


def test_run_is_exit_2_before_any_call(tmp_path, monkeypatch, capsys) -> None:
    from tests.commands.test_run_end_to_end import run, write_config
    from tests.fakes.rag import RagServer

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAG_TOKEN", "tok-123456")
    with RagServer({}) as rag:
        write_config(tmp_path, rag.url, [{"id": "c1", "question": "q?"}], endpoint={"body": '"{{ "a" * 300000000 }}"'})
        outcome = run(capsys, "run", "--report", "r.json")
        assert rag.seen == []
    assert outcome.code == 2
    assert outcome.err.splitlines()[0] == (
        "ragjudge: error: endpoint.body: the template renders over 1,000,000 bytes for case 'c1' "
        "(endpoint.max_request_bytes: 1,000,000); rendering was stopped there"
    )
