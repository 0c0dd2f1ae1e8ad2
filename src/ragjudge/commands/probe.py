"""`ragjudge probe`: send one request and show what ragjudge reads from the reply, key by key.

Exit 0 when the reply maps cleanly, 1 when a mapping key fails (or the
endpoint answered with an HTTP error), 3 when the endpoint cannot be reached.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ragjudge.commands.probe_golden import golden_warnings
from ragjudge.endpoint.decoding import MAX_DEPTH, TooDeep, loads_bounded
from ragjudge.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from ragjudge.cases.case import Case
    from ragjudge.config.model import Config, ResponseMapping
    from ragjudge.endpoint.result import RawReply
    from ragjudge.endpoint.trace import Trace

BODY_CHARS = 4000
"""How much of the pretty-printed reply body is shown."""
TEXT_CHARS = 100
"""How much of an answer or a passage's text is shown."""

SAMPLE_QUESTION = "What can you help me with?"
"""Sent when neither --question nor --case is given and the config lists no cases: any service answers it."""
_SAMPLE_ORIGIN = "sample question"

_SECRET_HEADER_WORDS = ("auth", "key", "token", "secret", "cookie", "password", "signature")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("probe", help="send one request and show what every response mapping key extracts")
    p.add_argument("--config", type=Path, help="config file (default: ./ragjudge.yml if present)")
    p.add_argument("--endpoint", help="endpoint URL (overrides endpoint.url)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--question", metavar="TEXT", help="the question to send")
    which.add_argument("--case", metavar="ID", help="send the question of this case (from `cases:`)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from ragjudge.config.model import load_config
    from ragjudge.endpoint.client import EndpointClient, header_secrets
    from ragjudge.gate.evaluation import endpoint_url

    config = load_config(args.config)
    url = endpoint_url(config, args.endpoint)
    case = _pick_case(config, args.question, args.case)
    client = EndpointClient(config.endpoint, url)
    secrets = header_secrets(config.endpoint.headers)
    if config.judge.api_key is not None:
        secrets = (*secrets, config.judge.api_key.get_secret_value())
    out = sys.stdout
    if case.origin == _SAMPLE_ORIGIN:
        print(f"question: {json.dumps(case.question)} (a sample: no --question, --case or `cases:` given)\n", file=out)
    if case.turns:
        return _probe_conversation(out, config, client, case, secrets)
    return _probe(out, config, client, case, secrets)[0]


def _probe_conversation(out: TextIO, config: Config, client: Any, case: Case, secrets: tuple[str, ...]) -> int:
    """Each turn in order, as `run` asks it: with the conversation so far and the service's conversation id.

    The worst turn's exit code; a turn whose reply cannot be read, or whose request the earlier answers made too
    large to send, ends the conversation."""
    from ragjudge.cases.conversations import Dialogue
    from ragjudge.endpoint.dialogue import TurnOutgrown
    from ragjudge.endpoint.wiring import history_warning

    dialogue = Dialogue()
    worst = int(ExitCode.PASSED)
    unheard = history_warning([case], config.endpoint)
    if unheard is not None:
        print(f"warning: {unheard}\n", file=out)
        worst = int(ExitCode.GATE_FAILED)
    for turn in case.turns:
        print(f"== {case.id}: turn {turn.turn} of {len(case.turns)}", file=out)
        this = dialogue.ask(turn)
        try:
            code, trace = _probe(out, config, client, this, secrets)
        except TurnOutgrown as outgrown:  # as `run` reads it: this turn's error, found before it is sent
            print(f"result: {outgrown.reason}", file=out)
            code, trace = int(ExitCode.GATE_FAILED), None
        worst = max(worst, code)
        if trace is None:
            if turn.turn < len(case.turns):
                print(
                    f"\nturns {turn.turn + 1} to {len(case.turns)} not sent: turn {turn.turn} gave no answer", file=out
                )
            return worst
        dialogue.answered(this, trace.answer, trace.conversation_id)
        if trace.conversation_id:
            print(f"  conversation_id for the next turn: {trace.conversation_id}", file=out)
        print(file=out)
    return worst


def _probe(out: TextIO, config: Config, client: Any, case: Case, secrets: tuple[str, ...]) -> tuple[int, Trace | None]:
    """One request and what its reply maps to: the exit code, and the reply as read (None when it could not be)."""
    rendered_url, body = client.render(case)
    _show_request(out, config, rendered_url, client.request_headers(body), body, secrets)
    raw = client.fetch_once(rendered_url, body)  # EvaluationError (exit 3) when unreachable
    data = _show_reply(out, raw, secrets)
    if raw.status >= 400:
        return _show_http_error(out, client, config, rendered_url, raw, data, secrets), None
    unread: list[str] = []
    if client.streams(raw):
        from ragjudge.commands.probe_stream import show_stream
        from ragjudge.endpoint.client import mask

        try:
            streamed, assembly, ttft_ms = client.assemble(raw)
        except ValueError as exc:
            print(f"\nresult: endpoint error: {exc}", file=out)
            return int(ExitCode.GATE_FAILED), None
        print("\nassembled from the stream's events", file=out)
        print(_indent(mask(json.dumps(streamed, indent=2, ensure_ascii=False)[:BODY_CHARS], secrets)), file=out)
        said = show_stream(out, raw, assembly, ttft_ms, config.endpoint)
        unread = [said] if said else []
        data = streamed
    if not isinstance(data, dict):
        kind = f"a JSON {type(data).__name__}, not an object"
        if data is _NOT_JSON:
            kind = "not JSON"
        elif data is _TOO_DEEP:
            kind = f"nested more than {MAX_DEPTH} deep"
        print(f"\nresult: the reply is {kind}: ragjudge reads JSON objects", file=out)
        return int(ExitCode.GATE_FAILED), None
    return _show_mapping(out, client, raw, data, config.endpoint.response, case, secrets, unread)


def _show_http_error(
    out: TextIO, client: Any, config: Config, url: str, raw: RawReply, data: Any, secrets: tuple[str, ...]
) -> int:
    from ragjudge.commands.probe_hints import body_hints, route_hints
    from ragjudge.commands.probe_stream import http_error_hints
    from ragjudge.endpoint.client import error_excerpt, mask
    from ragjudge.transport.urls import public_url

    said = mask(error_excerpt(raw.body), secrets)
    print(f"\nresult: HTTP {raw.status} from {config.endpoint.method} {public_url(url)}", file=out)
    if said:
        print(f"  the server said: {said}", file=out)
    hints = body_hints(data, url, client) if raw.status == 422 else []
    if raw.status == 404:
        hints = route_hints(url, client)
    hints = http_error_hints(url, raw, config.endpoint) + hints
    for hint in hints:
        print(f"  hint: {mask(hint, secrets)}", file=out)
    if raw.status >= 500:
        print(
            "  the service failed while answering (a 5xx is its own error, not a malformed request): its logs say "
            "why; probe again once it answers",
            file=out,
        )
    else:
        print("  fix the request (endpoint.body, endpoint.headers, the URL) until the status is 2xx", file=out)
    return int(ExitCode.GATE_FAILED)


def _pick_case(config: Config, question: str | None, case_id: str | None) -> Case:
    from ragjudge.cases.case import Case
    from ragjudge.cases.caseset import load_cases

    if question is not None:
        if not question.strip():
            raise UsageError("--question: the question is empty")
        return Case("probe", question, None, (), None, True, (), (), None, None, (), "--question")
    if not config.cases:
        if case_id is not None:
            raise UsageError(f"--case {case_id}: the config lists no `cases:`", tip="pass --question TEXT instead")
        return Case("probe", SAMPLE_QUESTION, None, (), None, True, (), (), None, None, (), _SAMPLE_ORIGIN)
    cases = load_cases(config.cases).cases
    if case_id is None:
        return cases[0]
    for case in cases:
        if case.id == case_id:
            return case
    shown = ", ".join(c.id for c in cases[:10])
    raise UsageError(f"--case {case_id}: no such case id (ids: {shown}{', ...' if len(cases) > 10 else ''})")


def _mask_header(name: str, value: str, secrets: tuple[str, ...]) -> str:
    from ragjudge.endpoint.client import mask

    if any(w in name.lower() for w in _SECRET_HEADER_WORDS):
        scheme, _, rest = value.partition(" ")
        return f"{scheme} ***" if rest and scheme.isalpha() and len(scheme) <= 10 else "***"
    return mask(value, secrets)


def _show_request(
    out: TextIO, config: Config, url: str, headers: dict[str, str], body: str | None, secrets: tuple[str, ...]
) -> None:
    from ragjudge.endpoint.client import mask
    from ragjudge.transport.urls import with_masked_query

    print("request", file=out)
    print(f"  {config.endpoint.method} {with_masked_query(url)}", file=out)
    for name, value in headers.items():
        print(f"  {name}: {_mask_header(name, value, secrets)}", file=out)
    if body is not None:
        print("  body:", file=out)
        print(_indent(mask(_pretty_text(body), secrets)), file=out)


_NOT_JSON: Any = object()
_TOO_DEEP: Any = object()


def _pretty_text(text: str) -> str:
    try:
        return json.dumps(loads_bounded(text), indent=2, ensure_ascii=False)
    except (json.JSONDecodeError, TooDeep):
        return text


def _indent(text: str, pad: str = "    ") -> str:
    return "\n".join(pad + line for line in text.splitlines())


def _show_reply(out: TextIO, raw: RawReply, secrets: tuple[str, ...]) -> Any:
    from ragjudge.endpoint.client import mask

    print("\nreply", file=out)
    print(f"  status: {raw.status} {raw.reason}".rstrip(), file=out)
    print(f"  content type: {raw.content_type or '(none)'}, {raw.size} bytes, {raw.elapsed_ms:.0f} ms", file=out)
    text = raw.body.decode("utf-8", errors="replace")
    try:
        data = loads_bounded(text)
        shown = json.dumps(data, indent=2, ensure_ascii=False)
    except json.JSONDecodeError:
        data, shown = _NOT_JSON, text
    except TooDeep:
        data, shown = _TOO_DEEP, text
    if len(shown) > BODY_CHARS:
        shown = shown[:BODY_CHARS] + f"\n… ({len(shown) - BODY_CHARS} more characters not shown)"
    print("  body:", file=out)
    print(_indent(mask(shown, secrets) or "(empty)"), file=out)
    return data


def _excerpt(text: str, limit: int = TEXT_CHARS) -> str:
    flat = " ".join(text.split())
    return json.dumps(flat if len(flat) <= limit else flat[: limit - 1] + "…", ensure_ascii=False)


_SHOWN_WHEN_THERE = frozenset({"conversation_id"})
"""Keys only some services have: shown when mapped or present, not as `nothing` on every probe."""
_FIND: dict[str, tuple[str, ...]] = {
    "refused": ("refused", "declined", "is_refusal", "no_answer", "out_of_scope", "refusal"),
    "confidence": ("confidence", "certainty"),
    "retrieved_ids": ("retrievedIds", "retrieved_ids", "doc_ids", "document_ids", "source_ids"),
    "cost_usd": ("cost_usd", "costUsd", "cost"),
    "latency_ms": ("latency_ms", "latencyMs", "latency", "duration_ms", "elapsed_ms"),
}
_ANSWER_WARNING = "endpoint.response.answer reads"
_TEXT_NAMES = ("text", "content", "page_content", "excerpt", "chunk")


def _hint(key: str, data: dict[str, Any], question: str) -> str | None:
    from ragjudge.endpoint.reply import find_named
    from ragjudge.endpoint.suggestion import suggest

    if key == "answer":
        return suggest(data, "", "answer", question)
    if key == "retrieved":
        return suggest(data, "", "passages", question)
    if key == "citations":
        return None
    return find_named(data, _FIND[key])


def _show_mapping(
    out: TextIO,
    client: Any,
    raw: RawReply,
    data: dict[str, Any],
    mapping: ResponseMapping,
    case: Case,
    secrets: tuple[str, ...],
    unread: list[str],
) -> tuple[int, Trace | None]:
    """The mapping key by key, the reply as read, and what is wrong with it: the exit code, and the reply as read
    (None when it could not be)."""
    from ragjudge.endpoint.answer_check import describe_flag, did_you_mean, is_certain
    from ragjudge.endpoint.coverage import mapping_warnings
    from ragjudge.endpoint.reply import DEFAULT_KEYS, REPLY_LEVEL_KEYS, ReplyShapeError, is_missing, locate

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
            hint = _hint(key, data, case.question)
            if hint and hint != mapped:
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
    _show_trace(out, trace)
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
    from ragjudge.endpoint.reply import describe

    if isinstance(value, str):
        return _excerpt(value)
    if isinstance(value, bool | int | float) or value is None:
        return json.dumps(value)
    return describe(value)


def _show_trace(out: TextIO, trace: Trace) -> None:
    print("\nread as", file=out)
    print(f"  answer: {_excerpt(trace.answer)}", file=out)
    declined = f"yes (by {trace.refused_by})" if trace.refused else "no"
    print(f"  declined: {declined}; confidence: {trace.confidence or '(none)'}", file=out)
    if trace.passages_unknown:
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
    from ragjudge.endpoint.reply import DEFAULT_KEYS, dig, find_named, locate
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
