"""`ragjudge probe`: send one request and show what ragjudge reads from the reply, key by key.

Exit 0 when the reply maps cleanly, 1 when a mapping key fails (or the
endpoint answered with an HTTP error), 3 when the endpoint cannot be reached.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ragjudge.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from ragjudge.cases import Case
    from ragjudge.config.model import Config, ResponseMapping
    from ragjudge.endpoint.result import RawReply
    from ragjudge.endpoint.trace import Trace

BODY_CHARS = 4000
"""How much of the pretty-printed reply body is shown."""
TEXT_CHARS = 100
"""How much of an answer or a passage's text is shown."""

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
    rendered_url, body = client.render(case)
    secrets = header_secrets(config.endpoint.headers)
    if config.judge.api_key is not None:
        secrets = (*secrets, config.judge.api_key.get_secret_value())
    out = sys.stdout
    _show_request(out, config, rendered_url, client.request_headers(body), body, secrets)
    raw = client.fetch_once(rendered_url, body)  # EvaluationError (exit 3) when unreachable
    data = _show_reply(out, raw, secrets)
    if raw.status >= 400:
        from ragjudge.endpoint.client import error_excerpt, mask
        from ragjudge.transport.urls import public_url

        said = mask(error_excerpt(raw.body), secrets)
        print(f"\nresult: HTTP {raw.status} from {config.endpoint.method} {public_url(rendered_url)}", file=out)
        if said:
            print(f"  the server said: {said}", file=out)
        for hint in _body_hints(data):
            print(f"  hint: {hint}", file=out)
        print("  fix the request (endpoint.body, endpoint.headers, the URL) until the status is 2xx", file=out)
        return int(ExitCode.GATE_FAILED)
    try:
        streamed = client.assembled(raw)
    except ValueError as exc:
        print(f"\nresult: endpoint error: {exc}", file=out)
        return int(ExitCode.GATE_FAILED)
    if streamed is not None:
        from ragjudge.endpoint.client import mask

        print("\nassembled from the stream's events (endpoint.stream, response.answer_delta)", file=out)
        print(_indent(mask(json.dumps(streamed, indent=2, ensure_ascii=False)[:BODY_CHARS], secrets)), file=out)
        data = streamed
    if not isinstance(data, dict):
        kind = "not JSON" if data is _NOT_JSON else f"a JSON {type(data).__name__}, not an object"
        print(f"\nresult: the reply is {kind}: ragjudge reads JSON objects", file=out)
        return int(ExitCode.GATE_FAILED)
    return _show_mapping(out, client, raw, data, config.endpoint.response, case.id, secrets)


# FastAPI on pydantic 2 says `missing` and `dict_type`; on pydantic 1 (FastAPI before 0.100, still common)
# `value_error.missing` and `type_error.dict`.
_MISSING_TYPES = frozenset({"missing", "value_error.missing"})
_OBJECT_TYPES = frozenset({"dict_type", "model_type", "model_attributes_type", "type_error.dict"})


def _body_example(path: Sequence[str]) -> str:
    """`{"a": {"b": {{ question | tojson }}}}` for the path a.b: a body template that puts the question there."""
    text = "{{ question | tojson }}"
    for name in reversed(path):
        text = "{" + json.dumps(name) + ": " + text + "}"
    return text


def _body_hints(data: Any) -> list[str]:
    """What a FastAPI 422 (`{"detail": [{"type", "loc": ["body", ...]}]}`) says the body lacks, as hints.

    A missing field may be nested (LangServe's `input.question`); a field that must be an object (LangServe's
    `input`, the chain's input schema) gets the likeliest shape, with where to look for the real one.
    """
    detail = data.get("detail") if isinstance(data, dict) else None
    hints = []
    for item in detail if isinstance(detail, list) else []:
        loc = item.get("loc") if isinstance(item, dict) else None
        if not isinstance(loc, list) or len(loc) < 2 or loc[0] != "body":
            continue
        path = [str(part) for part in loc[1:]]
        where = ".".join(path)
        if item.get("type") in _MISSING_TYPES:
            hints.append(
                f"the server wants a body field {where!r}: set endpoint.body to something like '{_body_example(path)}'"
            )
        elif item.get("type") in _OBJECT_TYPES:
            hints.append(
                f"the server wants body field {where!r} to be an object of the fields it takes (a LangServe "
                f"route lists them at .../input_schema): e.g. '{_body_example([*path, 'question'])}'"
            )
    return hints


def _pick_case(config: Config, question: str | None, case_id: str | None) -> Case:
    from ragjudge.cases import Case, load_cases

    if question is not None:
        if not question.strip():
            raise UsageError("--question: the question is empty")
        return Case("probe", question, None, (), None, True, (), (), None, None, (), "--question")
    if not config.cases:
        raise UsageError(
            "no question to send", tip="pass --question TEXT, or list case files under `cases:` and pass --case ID"
        )
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


def _pretty_text(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except json.JSONDecodeError:
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
        data = json.loads(text)
        shown = json.dumps(data, indent=2, ensure_ascii=False)
    except json.JSONDecodeError:
        data, shown = _NOT_JSON, text
    if len(shown) > BODY_CHARS:
        shown = shown[:BODY_CHARS] + f"\n… ({len(shown) - BODY_CHARS} more characters not shown)"
    print("  body:", file=out)
    print(_indent(mask(shown, secrets) or "(empty)"), file=out)
    return data


def _excerpt(text: str, limit: int = TEXT_CHARS) -> str:
    flat = " ".join(text.split())
    return json.dumps(flat if len(flat) <= limit else flat[: limit - 1] + "…", ensure_ascii=False)


_REPLY_KEYS = ("answer", "refused", "confidence", "retrieved", "retrieved_ids", "citations", "cost_usd", "latency_ms")
_FIND: dict[str, tuple[str, ...]] = {
    "refused": ("refused", "declined", "is_refusal", "no_answer", "out_of_scope", "refusal"),
    "confidence": ("confidence", "certainty"),
    "retrieved_ids": ("retrievedIds", "retrieved_ids", "doc_ids", "document_ids", "source_ids"),
    "cost_usd": ("cost_usd", "costUsd", "cost"),
    "latency_ms": ("latency_ms", "latencyMs", "latency", "duration_ms", "elapsed_ms"),
}
_ID_NAMES = ("doc_id", "document_id", "docId", "source_id", "id_", "file_name", "source", "id")
_TEXT_NAMES = ("text", "content", "page_content", "excerpt", "chunk")


def _hint(key: str, data: dict[str, Any]) -> str | None:
    from ragjudge.endpoint.reply import find_named, suggest

    if key == "answer":
        return suggest(data, "", "text")
    if key == "retrieved":
        return suggest(data, "", "passages")
    if key == "citations":
        return None
    return find_named(data, _FIND[key])


def _show_mapping(
    out: TextIO,
    client: Any,
    raw: RawReply,
    data: dict[str, Any],
    mapping: ResponseMapping,
    case_id: str,
    secrets: tuple[str, ...],
) -> int:
    from ragjudge.endpoint.coverage import mapping_warnings
    from ragjudge.endpoint.reply import DEFAULT_KEYS, ReplyShapeError, is_missing, locate

    print("\nmapping (endpoint.response)", file=out)
    suggested: dict[str, str] = {}
    for key in _REPLY_KEYS:
        value, path = locate(data, mapping, key)
        mapped = getattr(mapping, key)
        if is_missing(value):
            tried = f"mapped to {mapped}" if mapped else "tried " + ", ".join(DEFAULT_KEYS[key])
            line = f"  {key}: nothing ({tried})"
            hint = _hint(key, data)
            if hint and hint != mapped:
                line += f": did you mean {hint}?"
                suggested[key] = hint
            print(line, file=out)
            continue
        print(f"  {key} ({path}): {_describe_value(value)}", file=out)
    _passage_hints(out, data, mapping, suggested)
    try:
        trace = client.read(raw)
    except (ReplyShapeError, ValueError) as exc:
        _suggest_yaml(out, mapping, suggested)
        print(f"\nresult: mapping error: {exc}", file=out)
        return int(ExitCode.GATE_FAILED)
    _show_trace(out, trace)
    warnings = mapping_warnings([(case_id, trace)], mapping)
    for w in warnings:
        print(f"  warning: {w}", file=out)
    _suggest_yaml(out, mapping, suggested)
    if warnings:
        print("\nresult: the reply maps, with the warnings above", file=out)
        return int(ExitCode.GATE_FAILED)
    print("\nresult: the reply maps cleanly", file=out)
    return int(ExitCode.PASSED)


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

    retrieved, _ = locate(data, mapping, "retrieved")
    if not isinstance(retrieved, list) and "retrieved" in suggested:
        retrieved = dig(data, suggested["retrieved"])
    first = retrieved[0] if isinstance(retrieved, list) and retrieved and isinstance(retrieved[0], dict) else None
    if first is None:
        return
    if not mapping.retrieved_id:
        default_id = next((first[k] for k in DEFAULT_KEYS["retrieved_id"] if first.get(k) is not None), None)
        hashed = isinstance(default_id, str) and _looks_hashed(default_id)
        if default_id is None or hashed:
            better = find_named({k: v for k, v in first.items() if not (hashed and k == "id")}, _ID_NAMES)
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


def _looks_hashed(value: str) -> bool:
    return len(value) >= 32 and all(c in "0123456789abcdef-" for c in value.lower())


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
