"""The suite-level mapping check: a key that resolved in none of the replies is said once, in the report.

A single reply may lack a `refused` field or a passage's id for good reasons;
every reply lacking it means the path is wrong, and the run would otherwise
score refusals, recall or faithfulness on nothing without a word.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.config.endpoint_config import ResponseMapping
from ragjudge.endpoint.answer_check import describe_flag, did_you_mean, is_certain, most
from ragjudge.endpoint.reply import DEFAULT_KEYS
from ragjudge.endpoint.trace import AnswerFlag, Trace

_CONSEQUENCE = {
    "refused": "refusals were decided by empty answers and refusal phrases only",
    "retrieved_id": "passages have no ids, so context_recall and context_precision cannot match golden ids",
    "retrieved_text": "passages have no text, so faithfulness has no evidence to check claims against",
    "retrieved_title": "passages are untitled",
}


def _cases(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:5])
    return shown + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def mapping_warnings(replies: Sequence[tuple[str, Trace | None]], mapping: ResponseMapping) -> list[str]:
    """Warnings for keys that resolved nowhere, per-passage keys that missed, and positional ids."""
    traces = [(cid, t) for cid, t in replies if t is not None]
    if not traces:
        return []
    warnings: list[str] = []
    with_objects = [(cid, t) for cid, t in traces if t.read.passage_objects]
    for key in ("refused", "retrieved_id", "retrieved_text", "retrieved_title"):
        path = getattr(mapping, key)
        pool = traces if key == "refused" else with_objects
        if not pool:
            continue
        found = [cid for cid, t in pool if key in t.read.resolved]
        if path and not found:
            where = "replies" if key == "refused" else "replies with passages"
            warnings.append(
                f"endpoint.response.{key} ({path}) resolved in none of the {len(pool)} {where}: "
                f"{_CONSEQUENCE[key]}; check the path with `ragjudge probe`"
            )
            continue
        if key == "retrieved_text" and not path and not found:
            tried = ", ".join(DEFAULT_KEYS[key])
            declared = {t.stream.protocol for _, t in pool if t.stream is not None and t.stream.protocol != "generic"}
            fix = "map endpoint.response.retrieved_text"
            if declared:
                # A protocol's passage events carry what they carry (the AI SDK's source parts: ids and titles): the
                # text comes from another event, which only the team can name.
                fix = (
                    f"the {', '.join(sorted(declared))} stream's passage events carry none: send the passages' text "
                    "in an event of your own and name it under endpoint.protocol.passages "
                    "(docs/streams.md: Stream protocols)"
                )
            warnings.append(
                f"passages carried no text under {tried} in any of the {len(pool)} replies with passages: "
                f"{_CONSEQUENCE[key]}; {fix}"
            )
            continue
        missed = [(cid, n) for cid, t in pool for k, n in t.read.missed if k == key]
        if path and missed:
            total = sum(n for _, n in missed)
            warnings.append(
                f"endpoint.response.{key} ({path}) resolved to nothing in {total} passage(s) of "
                f"{len(missed)} replies (cases {_cases([cid for cid, _ in missed])})"
            )
    hashed = [(cid, t.read.stable_id_at) for cid, t in traces if t.read.hashed_ids]
    if hashed:
        stable = next((at for _, at in hashed if at), None)
        where = (
            f"a stable id is at {stable}: map endpoint.response.retrieved_id: {stable}"
            if stable
            else "map endpoint.response.retrieved_id to the document's own id"
        )
        warnings.append(
            f"passage ids in {len(hashed)} replies look like content hashes (64 hex characters; cases "
            f"{_cases([cid for cid, _ in hashed])}): golden_context_ids never match them; {where}"
        )
    warnings.extend(_answer_warnings(traces))
    positional = [cid for cid, t in traces if t.read.positional_ids]
    if positional:
        warnings.append(
            f"passages in {len(positional)} replies carried no id (cases {_cases(positional)}): ragjudge numbered "
            "them S1, S2, ... by position, which golden ids never match; map endpoint.response.retrieved_id "
            "(or retrieved_ids)"
        )
    return warnings


def _answer_warnings(traces: Sequence[tuple[str, Trace]]) -> list[str]:
    """One warning per way the answer was misread (the same kind at the same path), naming the cases."""
    groups: dict[tuple[str, str], tuple[AnswerFlag, list[str]]] = {}
    for cid, trace in traces:
        flag = trace.read.answer_flag
        if flag is None:
            continue
        first, cids = groups.setdefault((flag.kind, flag.path), (flag, []))
        cids.append(cid)
        if first.hint is None and flag.hint is not None:
            groups[(flag.kind, flag.path)] = (flag, cids)
    # A passage's text alone is said only when most replies carry it: an extractive service quotes now and then.
    return [
        f"{describe_flag(flag)} in {len(cids)} of {len(traces)} replies (cases {_cases(cids)}){did_you_mean(flag)}"
        for flag, cids in groups.values()
        if is_certain(flag) or most(len(cids), len(traces))
    ]


def unknown_passages_warning(replies: Sequence[tuple[str, Trace | None]]) -> list[str]:
    """The run's one warning about replies whose passages are unknown (`Trace.passages_unknown`), naming the
    mapping that would expose them."""
    traces = [(cid, t) for cid, t in replies if t is not None]
    unknown = [cid for cid, t in traces if t.passages_unknown]
    if not unknown:
        return []
    tried = ", ".join(DEFAULT_KEYS["retrieved"])
    return [
        f"endpoint.response.retrieved is not mapped and {len(unknown)} of {len(traces)} replies carried no "
        f"passages under {tried} (cases {_cases(unknown)}): what the service retrieved is unknown, so "
        "context_recall and context_precision are null and faithfulness, grounding and citations unassessable "
        "for them (a rule on them is a case error); map endpoint.response.retrieved to where the service puts "
        "its passages"
    ]
