"""Fuzzing the inputs (issue 11): any config or case file either loads or is exit 2 with a message naming it.

Never an internal error, a traceback or a hang. Documents are built from YAML fragments that go for the
weak spots (aliases, tags, deep brackets, odd scalars, `${VAR}`) inside and around the real keys, and
also as raw bytes. `FUZZ_EXAMPLES` examples per property a run (docs/guarantees.md states the counts).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragjudge.cases.caseset import load_cases
from ragjudge.config.loader import load_config
from ragjudge.errors import ExitCode, RagjudgeError

FUZZ_EXAMPLES = 100
SETTINGS = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)

_SCALARS = st.one_of(
    st.sampled_from(
        [
            ".inf",
            "-.inf",
            ".nan",
            "1e999",
            "-1",
            "0",
            "3601",
            "257",
            "null",
            "~",
            "yes",
            "''",
            '"\\r\\n"',
            "'${NOPE}'",
            "'${HOME}'",
            "'${X:-}'",
            "!!binary aGk=",
            "!!python/name:os.system",
            "[",
            "{",
            "*a",
            "&a 1",
            "'a\\u2028b'",
            "令牌",
            "'\\x00'",
            "2024-01-01",
            "0x1F",
            "<<",
            "=",
            "'{{ q }}'",
        ]
    ),
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=8).map(lambda s: yaml.safe_dump(s).removesuffix("\n...\n").strip()),
)
_CONFIG_KEYS = [
    "endpoint",
    "endpoint.url",
    "endpoint.method",
    "endpoint.headers",
    "endpoint.body",
    "endpoint.timeout_s",
    "endpoint.retries",
    "endpoint.concurrency",
    "endpoint.max_response_bytes",
    "endpoint.response.answer",
    "judge.provider",
    "judge.api_key",
    "judge.timeout_s",
    "judge.concurrency",
    "judge.max_passages",
    "judge.max_passage_chars",
    "judge.escalate.band",
    "judge.prices.m.input_per_mtok",
    "cases",
    "gate.case",
    "gate.suite.pass_rate",
    "template",
    "max_case_file_bytes",
    "canary.confidence",
    "canary.bootstrap",
    "canary.feedback.url",
    "canary.feedback.headers.X-Key",
    "nonsense",
]
_CASE_KEYS = [
    "id",
    "question",
    "expected",
    "golden_context_ids",
    "category",
    "should_answer",
    "must_mention",
    "must_not_mention",
    "source",
    "difficulty",
    "tags",
    "goldenContextIds",
    "bogus",
]


def _nest(path: str, value: str) -> str:
    parts = path.split(".")
    return "".join("{" + f"{p}: " for p in parts) + value + "}" * len(parts)


_FRAGMENT = st.one_of(
    st.tuples(st.sampled_from(_CONFIG_KEYS), _SCALARS).map(lambda kv: _nest(*kv)),
    st.integers(1, 3000).map(lambda n: "[" * n + "]" * n),
    st.just("&a [*a]"),
    st.just(
        "{a: &a [x, x, x, x, x, x, x, x, x, x], b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a], "
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b], d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c], "
        "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d]}"
    ),
    _SCALARS,
)


def _document(fragments: list[str]) -> str:
    # Top-level mappings are merged line by line, anything else stands alone; both shapes are worth trying.
    return "\n".join(f"k{i}: {f}" if i and not f.startswith("{") else f for i, f in enumerate(fragments))


def _assert_loads_or_names(path: Path, load: object) -> None:
    try:
        load(path)  # type: ignore[operator]
    except RagjudgeError as exc:
        assert exc.exit_code == ExitCode.BAD_INPUT, exc.message
        assert str(path) in exc.message or path.name in exc.message, exc.message


@SETTINGS
@given(
    st.one_of(
        st.lists(_FRAGMENT, min_size=1, max_size=4).map(_document),
        st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
    )
)
def test_any_config_file_loads_or_is_exit_2_naming_it(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ragjudge.yml"
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        _assert_loads_or_names(path, load_config)


_CASE = st.dictionaries(st.sampled_from(_CASE_KEYS), _SCALARS, max_size=5).map(
    lambda d: "{" + ", ".join(f"{k}: {v}" for k, v in d.items()) + "}"
)


@SETTINGS
@given(
    st.one_of(
        st.lists(st.one_of(_CASE, _FRAGMENT), max_size=4).map(lambda items: "".join(f"- {i}\n" for i in items)),
        st.lists(_FRAGMENT, min_size=1, max_size=3).map(_document),
        st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
    ),
    st.sampled_from(["cases.yaml", "cases.jsonl"]),
)
def test_any_case_file_loads_or_is_exit_2_naming_it(text: str, name: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_text(text, encoding="utf-8")
        _assert_loads_or_names(path, lambda p: load_cases([p]))
