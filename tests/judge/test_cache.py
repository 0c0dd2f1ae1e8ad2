"""The judge cache: a rerun on unchanged answers makes no judge calls; anything that could change a judgement
changes the key; a reply that failed validation is never stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragjudge.judge.cache import JudgeCache, cache_key
from ragjudge.judge.chat import ChatCaller
from ragjudge.judge.openai_judge import OpenAIJudge
from ragjudge.judge.prompting import GATE_TEMPLATES, template
from tests.fakes.openai_server import FakeOpenAI, Reply, queue
from tests.fakes.rag import make_case, make_trace
from tests.judge.openai_helpers import (
    PASSAGES,
    LogSink,
    by_kind,
    claim,
    claims_json,
    make_judge,
    rubric_json,
)

CASE = make_case("c1", "How long do refunds take?")
TRACE = make_trace("Refunds take 5 working days.", ids=list(PASSAGES), passages=PASSAGES)
PROSE = Reply(content="I think the answer is good, maybe a 4 overall.")


def _files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.json"))


# ------------------------------------------------------------------------------------ JudgeCache
def test_cache_roundtrip_and_fan_out(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "c")
    key = cache_key({"a": 1})
    assert cache.get(key) is None
    cache.put(key, {"content": "x", "model": "m"})
    assert cache.get(key) == {"content": "x", "model": "m"}
    assert (tmp_path / "c" / key[:2] / f"{key}.json").is_file()
    assert not list((tmp_path / "c").rglob("*.tmp"))  # written atomically, nothing left over


def test_a_damaged_or_odd_entry_is_a_miss_not_an_error(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    key = cache_key({"a": 2})
    path = tmp_path / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    assert cache.get(key) is None
    path.write_text("[1, 2]", encoding="utf-8")
    assert cache.get(key) is None
    path.write_bytes(b"\xff\xfe")
    assert cache.get(key) is None


def test_no_folder_disables_the_cache() -> None:
    cache = JudgeCache(None)
    cache.put("ab" * 32, {"content": "x"})
    assert cache.get("ab" * 32) is None


def test_an_unwritable_cache_path_is_ignored(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    cache = JudgeCache(blocker)  # mkdir under a regular file fails with OSError
    cache.put("ab" * 32, {"content": "x"})
    assert cache.get("ab" * 32) is None


def test_cache_key_is_stable_and_sensitive_to_every_part() -> None:
    base: dict[str, Any] = {
        "base_url": "http://h/v1",
        "model": "m",
        "kind": "rubric",
        "messages": [{"role": "user", "content": "q"}],
        "schema": {"type": "json_schema"},
        "temperature": 0.0,
        "seed": 7,
        "sample": 0,
    }
    assert cache_key(base) == cache_key(dict(reversed(list(base.items()))))
    changed: list[dict[str, Any]] = [
        {"base_url": "http://other/v1"},
        {"model": "m2"},
        {"kind": "faithfulness"},
        {"messages": [{"role": "user", "content": "q2"}]},
        {"schema": {"type": "json_object"}},
        {"temperature": 0.2},
        {"seed": 8},
        {"seed": None},
        {"sample": 1},
    ]
    keys = {cache_key({**base, **c}) for c in changed}
    assert len(keys) == len(changed) and cache_key(base) not in keys


# ------------------------------------------------------------------------------- through the judge
def test_a_second_judgement_on_the_same_inputs_makes_no_calls(fake: FakeOpenAI, tmp_path: Path) -> None:
    judge = make_judge(fake, tmp_path / "cache")
    first = judge.judge(CASE, TRACE, LogSink())
    assert (first.calls, first.cache_hits, fake.call_count) == (2, 0, 2)
    sink = LogSink()
    second = judge.judge(CASE, TRACE, sink)
    assert fake.call_count == 2
    assert (second.calls, second.cache_hits, second.tokens, second.cost_usd) == (0, 2, 0, 0.0)
    assert second.scores == first.scores and second.reasoning == first.reasoning
    assert second.faithfulness == first.faithfulness == 1.0 and second.claims == first.claims
    assert [(line["judge_kind"], line["cache_hit"]) for line in sink.lines] == [
        ("rubric", True),
        ("faithfulness", True),
    ]
    # A new judge (the next CI run) on the same folder: still no calls.
    third = make_judge(fake, tmp_path / "cache").judge(CASE, TRACE, LogSink())
    assert (third.calls, third.cache_hits, fake.call_count) == (0, 2, 2)
    assert len(_files(tmp_path / "cache")) == 2


def test_without_a_cache_folder_every_judgement_calls(fake: FakeOpenAI) -> None:
    judge = make_judge(fake, None)
    judge.judge(CASE, TRACE, LogSink())
    judge.judge(CASE, TRACE, LogSink())
    assert fake.call_count == 4


def test_a_reply_that_failed_validation_is_not_cached(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.responder = by_kind(rubric=PROSE)
    first = make_judge(fake, tmp_path / "cache").judge(CASE, TRACE, LogSink())
    assert [u.judgement for u in first.unscored] == ["rubric"]
    assert fake.call_count == 3  # two rubric attempts + one faithfulness
    assert len(_files(tmp_path / "cache")) == 1  # only the faithfulness verdict

    fake.responder = by_kind()  # the judge behaves now
    second = make_judge(fake, tmp_path / "cache").judge(CASE, TRACE, LogSink())
    assert fake.call_count == 4  # the rubric is asked again; faithfulness comes from the cache
    assert (second.calls, second.cache_hits, second.unscored) == (1, 1, ())
    assert second.scores["grounding"] == 4


def test_a_reply_that_passed_after_correction_is_cached(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.responder = by_kind(rubric=queue(PROSE, Reply(content=rubric_json({"tone": 2}))))
    first = make_judge(fake, tmp_path / "cache").judge(CASE, TRACE, LogSink())
    assert first.scores["tone"] == 2 and fake.call_count == 3
    second = make_judge(fake, tmp_path / "cache").judge(CASE, TRACE, LogSink())
    assert second.scores["tone"] == 2 and (second.calls, fake.call_count) == (0, 3)


def test_a_damaged_cache_entry_is_asked_again_and_repaired(fake: FakeOpenAI, tmp_path: Path) -> None:
    make_judge(fake, tmp_path / "cache").judge(CASE, TRACE, LogSink())
    for path in _files(tmp_path / "cache"):
        entry = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps({**entry, "content": "garbage"}), encoding="utf-8")
    again = make_judge(fake, tmp_path / "cache").judge(CASE, TRACE, LogSink())
    assert (again.calls, again.cache_hits, fake.call_count) == (2, 0, 4)
    final = make_judge(fake, tmp_path / "cache").judge(CASE, TRACE, LogSink())
    assert (final.calls, final.cache_hits, fake.call_count) == (0, 2, 4)


@pytest.mark.parametrize(
    "change",
    [
        {"temperature": 0.5},
        {"model": "gpt-4o"},
        {"seed": 11},
        {"seed": None},
    ],
    ids=["temperature", "model", "seed", "no-seed"],
)
def test_changing_the_config_changes_the_key(fake: FakeOpenAI, tmp_path: Path, change: dict[str, Any]) -> None:
    make_judge(fake, tmp_path / "cache").judge(CASE, TRACE, LogSink())
    assert fake.call_count == 2
    changed = make_judge(fake, tmp_path / "cache", **change).judge(CASE, TRACE, LogSink())
    assert (changed.calls, changed.cache_hits, fake.call_count) == (2, 0, 4)
    # ... and the original config still hits its own entries.
    same = make_judge(fake, tmp_path / "cache").judge(CASE, TRACE, LogSink())
    assert (same.calls, same.cache_hits, fake.call_count) == (0, 2, 4)


def test_a_different_base_url_is_a_different_key(fake: FakeOpenAI, tmp_path: Path) -> None:
    make_judge(fake, tmp_path / "cache").judge(CASE, TRACE, LogSink())
    with FakeOpenAI(by_kind()) as other:
        judged = make_judge(other, tmp_path / "cache").judge(CASE, TRACE, LogSink())
        assert (judged.calls, other.call_count) == (2, 2)


def test_changing_the_prompt_changes_the_key(fake: FakeOpenAI, tmp_path: Path) -> None:
    judge: OpenAIJudge = make_judge(fake, tmp_path / "cache")
    judge.judge(CASE, TRACE, LogSink())
    # A different answer: both prompts change.
    other_answer = make_trace("Refunds take 7 working days.", ids=list(PASSAGES), passages=PASSAGES)
    assert judge.judge(CASE, other_answer, LogSink()).calls == 2
    # A different question: only the rubric prompt shows the question; the claims prompt is unchanged.
    other_question = make_case("c1", "When is my money back?")
    judged = judge.judge(other_question, TRACE, LogSink())
    assert (judged.calls, judged.cache_hits) == (1, 1)
    # Passages trimmed differently: excerpt_chars is part of the prompt.
    trimmed_judge = make_judge(fake, tmp_path / "cache", excerpt_chars=50)
    assert trimmed_judge.judge(CASE, TRACE, LogSink()).calls == 2
    assert fake.call_count == 7


def test_each_sample_has_its_own_entry(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.responder = by_kind(faithfulness=Reply(content=claims_json(claim("Refunds take 5 working days."))))
    first = make_judge(fake, tmp_path / "cache", samples=3).judge(CASE, TRACE, LogSink())
    assert first.calls == 6 and len(_files(tmp_path / "cache")) == 6
    # samples=1 reuses sample 0 of each kind.
    one = make_judge(fake, tmp_path / "cache", samples=1).judge(CASE, TRACE, LogSink())
    assert (one.calls, one.cache_hits) == (0, 2)


# ------------------------------------------------------------------------------------ warm-up
def test_holds_entries_only_once_something_was_cached(tmp_path: Path) -> None:
    assert JudgeCache(None).holds_entries() is False
    cache = JudgeCache(tmp_path / "c")
    assert cache.holds_entries() is False  # no folder yet
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "stray.tmp").write_text("", encoding="utf-8")
    assert cache.holds_entries() is False  # a file is not an entry's fan-out folder
    cache.put(cache_key({"a": 1}), {"content": "x"})
    assert cache.holds_entries() is True


class CountingCaller(ChatCaller):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.opened: list[str | None] = []

    def client(self, base_url: str | None) -> Any:
        self.opened.append(base_url)
        return super().client(base_url)


def counting_judge(fake: FakeOpenAI, cache: Path) -> tuple[OpenAIJudge, CountingCaller]:
    judge = make_judge(fake, cache, caller=CountingCaller)
    assert isinstance(judge.caller, CountingCaller)
    return judge, judge.caller


def test_warm_up_opens_the_client_when_the_cache_is_cold(fake: FakeOpenAI, tmp_path: Path) -> None:
    judge, caller = counting_judge(fake, tmp_path / "cache")
    template.cache_clear()
    judge.warm_up()
    assert caller.opened == [fake.base_url]
    # The prompts are compiled too: the first judgements would otherwise each compile them.
    assert template.cache_info().currsize == len(GATE_TEMPLATES) == 10  # with the criteria and reference parts
    assert fake.call_count == 0  # opening a client calls nothing
    judge.judge(CASE, TRACE, LogSink())
    assert fake.call_count == 2


def test_warm_up_leaves_the_sdk_alone_when_the_cache_may_answer(fake: FakeOpenAI, tmp_path: Path) -> None:
    make_judge(fake, tmp_path / "cache").judge(CASE, TRACE, LogSink())  # the last CI run filled the cache
    judge, caller = counting_judge(fake, tmp_path / "cache")
    judge.warm_up()
    assert caller.opened == []
    rerun = judge.judge(CASE, TRACE, LogSink())
    assert (rerun.calls, rerun.cache_hits, caller.opened) == (0, 2, [])


def test_an_entry_linked_to_a_device_or_a_fifo_is_a_miss_not_a_hang(tmp_path: Path) -> None:
    # Issue 40: the cache folder may be committed; its entries are read through the one bounded reader.
    import os

    cache = JudgeCache(tmp_path / "cache")
    key, fifo_key = cache_key({"a": 1}), cache_key({"a": 2})
    for k in (key, fifo_key):
        (tmp_path / "cache" / k[:2]).mkdir(parents=True, exist_ok=True)
    (tmp_path / "cache" / key[:2] / f"{key}.json").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "cache" / fifo_key[:2] / f"{fifo_key}.json")
    assert cache.get(key) is None and cache.get(fifo_key) is None
