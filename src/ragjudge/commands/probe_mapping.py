"""`ragjudge probe` on the reply's mapping: what each `endpoint.response` key finds in the reply (with a path
to try where it finds nothing), the reply as a run reads it, what is wrong with it, and the mapping to paste.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, TextIO

from ragjudge.commands.probe_golden import golden_warnings
from ragjudge.errors import ExitCode
from ragjudge.metrics.names import COST_USD, LATENCY_MS

if TYPE_CHECKING:
    from ragjudge.cases.case import Case
    from ragjudge.config.endpoint_config import ResponseMapping
    from ragjudge.endpoint.probing import ProbeClient
    from ragjudge.endpoint.result import RawReply
    from ragjudge.endpoint.trace import Trace

TEXT_CHARS = 100
"""How much of an answer or a passage's text is shown."""


def _excerpt(text: str, limit: int = TEXT_CHARS) -> str:
    flat = " ".join(text.split())
    return json.dumps(flat if len(flat) <= limit else flat[: limit - 1] + "…", ensure_ascii=False)


_SHOWN_WHEN_THERE = frozenset({"conversation_id"})
"""Keys only some services have: shown when mapped or present, not as `nothing` on every probe."""
_FIND: dict[str, tuple[str, ...]] = {
    "refused": ("refused", "declined", "is_refusal", "no_answer", "out_of_scope", "refusal"),
    "confidence": ("confidence", "certainty"),
    "retrieved_ids": ("retrievedIds", "retrieved_ids", "doc_ids", "document_ids", "source_ids"),
    COST_USD: (COST_USD, "costUsd", "cost"),
    LATENCY_MS: (LATENCY_MS, "latencyMs", "latency", "duration_ms", "elapsed_ms"),
}
_TEXT_NAMES = ("text", "content", "page_content", "excerpt", "chunk")


def _hint(key: str, data: dict[str, Any], question: str) -> str | None:
    from ragjudge.endpoint.paths import find_named
    from ragjudge.endpoint.suggestion import suggest

    if key == "answer":
        return suggest(data, "", "answer", question)
    if key == "retrieved":
        return suggest(data, "", "passages", question)
    if key == "citations":
        return None
    return find_named(data, _FIND[key])


_CALL_RESULT = re.compile(r"(?P<calls>[^.]+)\.(?P<index>\d+)\.(?:result|output)(?:\..*)?")


def _retrieval_tool(hint: str | None, data: dict[str, Any]) -> str | None:
    """The tool whose call's result a passages hint points into (`tool_calls.0.result`), or None."""
    found = _CALL_RESULT.fullmatch(hint or "")
    calls = data.get(found["calls"]) if found else None
    if found is None or not isinstance(calls, list) or int(found["index"]) >= len(calls):
        return None
    call = calls[int(found["index"])]
    name = call.get("name") if isinstance(call, dict) else None
    return name if isinstance(name, str) and name else None


def show_mapping(
    out: TextIO,
    client: ProbeClient,
    raw: RawReply,
    data: dict[str, Any],
    mapping: ResponseMapping,
    case: Case,
    secrets: tuple[str, ...],
    unread: list[str],
    traced: bool = False,
) -> tuple[int, Trace | None]:
    """The mapping key by key, the reply as read, and what is wrong with it: the exit code, and the reply as read
    (None when it could not be). `traced`: `traces:` is set, so passages may come from the spans shown next."""
    from ragjudge.endpoint.answer_check import describe_flag, did_you_mean, is_certain
    from ragjudge.endpoint.coverage import mapping_warnings
    from ragjudge.endpoint.paths import is_missing
    from ragjudge.endpoint.reply import DEFAULT_KEYS, REPLY_LEVEL_KEYS, ReplyShapeError, locate

    print("\nmapping (endpoint.response)", file=out)
    suggested: dict[str, str] = {}
    for key in REPLY_LEVEL_KEYS:
        value, path = locate(data, mapping, key)
        mapped = getattr(mapping, key)
        if is_missing(value) and key in _SHOWN_WHEN_THERE and not mapped:
            continue
        if is_missing(value):
            tried = f"mapped to {mapped}" if mapped else "tried " + ", ".join(DEFAULT_KEYS[key])
            line = f"  {key}: nothing ({tried})"
            if key == "answer" and client.streams(raw):
                # The assembled object is not an event: `answer` would be the wrong key for a stream.
                print(
                    f"{line}: for a stream, map answer_delta to where each event carries its piece of the answer, "
                    "or declare the stream's protocol (above)",
                    file=out,
                )
                continue
            hint = _hint(key, data, case.question)
            tool = _retrieval_tool(hint, data) if key == "retrieved" and not mapping.retrieval_tool else None
            if tool is not None:
                # A path to one call's result holds only while that tool is called first; the tool's name holds
                # for every question.
                line += f": {tool}'s calls return them: set retrieval_tool: {tool}"
                suggested["retrieval_tool"] = tool
            elif hint and hint != mapped:
                line += f": did you mean {hint}?"
                suggested[key] = hint
            elif key == "refused" and not mapped:
                # Not a failure: most services have no such flag. The decision is shown once, under "read as".
                line = f"  {key}: no field ({tried}); declines are decided from the answer, see `declined` below"
            print(line, file=out)
            continue
        print(f"  {key} ({path}): {_describe_value(value)}", file=out)
    _passage_hints(out, data, mapping, suggested)
    try:
        trace = client.read(raw, case.question)
    except (ReplyShapeError, ValueError) as exc:
        _suggest_yaml(out, mapping, suggested)
        print(f"\nresult: mapping error: {exc}", file=out)
        return int(ExitCode.GATE_FAILED), None
    _show_trace(out, trace, traced)
    warnings = [
        w for w in mapping_warnings([(case.id, trace)], mapping) if not w.startswith("endpoint.response.answer")
    ]
    flag = trace.read.answer_flag
    if flag is not None and is_certain(flag):
        warnings.insert(0, describe_flag(flag) + did_you_mean(flag))
        if flag.hint:
            suggested["answer"] = flag.hint
    elif flag is not None:
        # One reply quoting a passage may be an extractive service; a run errs when most replies do.
        print(
            f"  note: {describe_flag(flag)}: fine for a service that quotes passages; when most replies do, "
            "a run makes those cases errors (a mapping mistake)"
            + (f"; did you mean {flag.hint}?" if flag.hint else ""),
            file=out,
        )
    golden = golden_warnings(case, trace, data, mapping)
    if golden:
        # Said once: the golden-id warning names the same fix, for this case's own ids.
        warnings = [w for w in warnings if not w.startswith("passage ids in ")]
    warnings += golden
    warnings = unread + warnings
    for w in warnings:
        print(f"  warning: {w}", file=out)
    _suggest_yaml(out, mapping, suggested)
    if warnings:
        print("\nresult: the reply maps, with the warnings above", file=out)
        return int(ExitCode.GATE_FAILED), trace
    print("\nresult: the reply maps cleanly", file=out)
    return int(ExitCode.PASSED), trace


def _describe_value(value: Any) -> str:
    from ragjudge.endpoint.paths import describe

    if isinstance(value, str):
        return _excerpt(value)
    if isinstance(value, bool | int | float) or value is None:
        return json.dumps(value)
    return describe(value)


def _show_trace(out: TextIO, trace: Trace, traced: bool) -> None:
    print("\nread as", file=out)
    print(f"  answer: {_excerpt(trace.answer)}", file=out)
    declined = f"yes (by {trace.refused_by})" if trace.refused else "no"
    print(f"  declined: {declined}; confidence: {trace.confidence or '(none)'}", file=out)
    if trace.passages_unknown and traced:
        print("  passages: none in the reply: the spans below may give them (traces:)", file=out)
    elif trace.passages_unknown:
        # Not a mapping fault by itself: many chat services expose none. `run` warns, and rules needing them error.
        print(
            "  passages: unknown (none in the reply, and endpoint.response.retrieved is not mapped: "
            "retrieval metrics and faithfulness will be null; map it if the service sends them)",
            file=out,
        )
    else:
        print(f"  passages: {len(trace.passages)}", file=out)
    for i, p in enumerate(trace.passages[:10], start=1):
        print(f"    [{i}] id {p.id or '(none)'} · title {p.title} · text {_excerpt(p.text, 80)}", file=out)
    if len(trace.passages) > 10:
        print(f"    … and {len(trace.passages) - 10} more", file=out)
    print(f"  citations: {', '.join(trace.citations) or '(none)'}", file=out)
    cost = f"{trace.cost_usd:g}" if trace.cost_usd is not None else "(none)"
    server = f"{trace.server_latency_ms:g} ms" if trace.server_latency_ms is not None else "(none)"
    print(f"  cost_usd: {cost}; server latency: {server}; measured latency: {trace.latency_ms:.0f} ms", file=out)


def _passage_hints(out: TextIO, data: dict[str, Any], mapping: ResponseMapping, suggested: dict[str, str]) -> None:
    """Per-passage paths are relative to one passage: suggest them from the first one."""
    from ragjudge.endpoint.paths import dig, find_named
    from ragjudge.endpoint.reply import DEFAULT_KEYS, locate
    from ragjudge.endpoint.suggestion import ID_NAMES, looks_like_id

    retrieved, _ = locate(data, mapping, "retrieved")
    if not isinstance(retrieved, list) and "retrieved" in suggested:
        retrieved = dig(data, suggested["retrieved"])
    first = retrieved[0] if isinstance(retrieved, list) and retrieved and isinstance(retrieved[0], dict) else None
    if first is None:
        return
    if not mapping.retrieved_id:
        default_id = next((first[k] for k in DEFAULT_KEYS["retrieved_id"] if first.get(k) is not None), None)
        hashed = isinstance(default_id, str) and looks_like_id(default_id)
        if default_id is None or hashed:
            better = find_named({k: v for k, v in first.items() if not (hashed and k == "id")}, ID_NAMES)
            if better:
                why = "passage ids look like content hashes" if hashed else "passages carry no id ragjudge knows"
                print(f"  hint: {why}; the document id may be at {better} (retrieved_id)", file=out)
                suggested["retrieved_id"] = better
    if not mapping.retrieved_text and not any(isinstance(first.get(k), str) for k in DEFAULT_KEYS["retrieved_text"]):
        better = find_named(first, _TEXT_NAMES)
        if better:
            print(f"  hint: the passages' text may be at {better} (retrieved_text)", file=out)
            suggested["retrieved_text"] = better
    if not mapping.retrieved_title and not isinstance(first.get("title"), str):
        better = find_named(first, ("title", "name", "file_name", "source"))
        if better and better != suggested.get("retrieved_id"):
            print(f"  hint: the passages' title may be at {better} (retrieved_title)", file=out)
            suggested["retrieved_title"] = better


def _suggest_yaml(out: TextIO, mapping: ResponseMapping, suggested: dict[str, str]) -> None:
    if not suggested:
        return
    # Printed as it goes in the file, indented under `endpoint:`, so it can be pasted as it is.
    print(
        "\nsuggested mapping: paste under `endpoint:` in your config, replacing any `response:`, then probe again",
        file=out,
    )
    print("  response:", file=out)
    merged = {k: v for k, v in mapping.model_dump().items() if v}
    merged.update(suggested)
    for key, value in merged.items():
        print(f"    {key}: {value}", file=out)
