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

from ragjudge.commands.probe_mapping import show_mapping
from ragjudge.endpoint.decoding import MAX_DEPTH, TooDeep, loads_bounded
from ragjudge.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from ragjudge.cases.case import Case
    from ragjudge.config.model import Config
    from ragjudge.endpoint.probing import ProbeClient
    from ragjudge.endpoint.result import RawReply
    from ragjudge.endpoint.trace import Trace
    from ragjudge.traces.session import TraceSession

BODY_CHARS = 4000
"""How much of the pretty-printed reply body is shown."""

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
    which.add_argument("--case", metavar="ID", help="send the question of this case (from `cases:`, or --cases)")
    p.add_argument("--cases", type=Path, nargs="+", metavar="FILE", help="case files for --case (override `cases:`)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from ragjudge.config.loader import load_config
    from ragjudge.endpoint.excerpt import header_secrets
    from ragjudge.endpoint.probing import ProbeClient
    from ragjudge.gate.evaluation import endpoint_url

    config = load_config(args.config)
    url = endpoint_url(config, args.endpoint)
    case = _pick_case(config, args.question, args.case, args.cases)
    client = ProbeClient(config.endpoint, url)
    secrets = header_secrets(config.endpoint.headers)
    if config.judge.api_key is not None:
        secrets = (*secrets, config.judge.api_key.get_secret_value())
    out = sys.stdout
    if case.origin == _SAMPLE_ORIGIN:
        print(f"question: {json.dumps(case.question)} (a sample: no --question, --case or `cases:` given)\n", file=out)
    if config.traces is not None:
        from ragjudge.traces.session import TraceSession

        # Up before the request: the spans may arrive before the reply does.
        with TraceSession(config.traces, config.key("traces")) as tracing:
            if case.turns:
                return _probe_conversation(out, config, client, case, secrets, tracing)
            return _probe(out, config, client, case, secrets, tracing)[0]
    if case.turns:
        return _probe_conversation(out, config, client, case, secrets)
    return _probe(out, config, client, case, secrets)[0]


def _probe_conversation(
    out: TextIO,
    config: Config,
    client: ProbeClient,
    case: Case,
    secrets: tuple[str, ...],
    tracing: TraceSession | None = None,
) -> int:
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
            code, trace = _probe(out, config, client, this, secrets, tracing)
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


def _probe(
    out: TextIO,
    config: Config,
    client: ProbeClient,
    case: Case,
    secrets: tuple[str, ...],
    tracing: TraceSession | None = None,
) -> tuple[int, Trace | None]:
    """One request and what its reply maps to: the exit code, and the reply as read (None when it could not be).
    With `tracing`, the request is traced and its spans shown after the mapping."""
    rendered_url, body = client.render(case)
    traced = tracing.headers(case, body) if tracing is not None else {}
    _show_request(out, config, rendered_url, {**client.request_headers(body), **traced}, body, secrets)
    raw = client.fetch_once(rendered_url, body, traced)  # EvaluationError (exit 3) when unreachable
    data = _show_reply(out, raw, secrets)
    if raw.status >= 400:
        return _show_http_error(out, client, config, rendered_url, raw, data, secrets), None
    unread: list[str] = []
    if client.streams(raw):
        from ragjudge.commands.probe_stream import show_stream
        from ragjudge.endpoint.excerpt import mask

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
    with_spans = tracing is not None
    code, trace = show_mapping(out, client, raw, data, config.endpoint.response, case, secrets, unread, with_spans)
    if tracing is None or trace is None:
        return code, trace
    from ragjudge.commands.probe_traces import show_spans

    spans_code, trace = show_spans(out, tracing, case, trace)
    return max(code, spans_code), trace


def _show_http_error(
    out: TextIO, client: ProbeClient, config: Config, url: str, raw: RawReply, data: Any, secrets: tuple[str, ...]
) -> int:
    from ragjudge.commands.probe_hints import body_hints, route_hints
    from ragjudge.commands.probe_stream import http_error_hints
    from ragjudge.endpoint.excerpt import error_excerpt, mask
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


def _pick_case(config: Config, question: str | None, case_id: str | None, files: list[Path] | None = None) -> Case:
    from ragjudge.cases.case import Case
    from ragjudge.cases.caseset import load_cases

    if question is not None:
        if not question.strip():
            raise UsageError("--question: the question is empty")
        return Case("probe", question, None, (), None, True, (), (), None, None, (), "--question")
    paths = files or config.cases
    if not paths:
        if case_id is not None:
            raise UsageError(
                f"--case {case_id}: the config lists no `cases:`", tip="pass --cases FILE, or --question TEXT instead"
            )
        return Case("probe", SAMPLE_QUESTION, None, (), None, True, (), (), None, None, (), _SAMPLE_ORIGIN)
    cases = load_cases(paths, config.max_case_file_bytes, None if files else config.folder).cases
    if case_id is None:
        return cases[0]
    for case in cases:
        if case.id == case_id:
            return case
    shown = ", ".join(c.id for c in cases[:10])
    raise UsageError(f"--case {case_id}: no such case id (ids: {shown}{', ...' if len(cases) > 10 else ''})")


def _mask_header(name: str, value: str, secrets: tuple[str, ...]) -> str:
    from ragjudge.endpoint.excerpt import mask

    if any(w in name.lower() for w in _SECRET_HEADER_WORDS):
        scheme, _, rest = value.partition(" ")
        return f"{scheme} ***" if rest and scheme.isalpha() and len(scheme) <= 10 else "***"
    return mask(value, secrets)


def _show_request(
    out: TextIO, config: Config, url: str, headers: dict[str, str], body: str | None, secrets: tuple[str, ...]
) -> None:
    from ragjudge.endpoint.excerpt import mask
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
    from ragjudge.endpoint.excerpt import mask

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
