"""What `ragjudge probe` can tell from an HTTP error about the request the service wants.

A 422 names the missing or mistyped body fields: FastAPI's own handler puts them under `loc: ["body", ...]`;
LangServe validates the body itself, so its `loc` is relative to the body (`["input"]`) or to the chain's input
(`["question"]`, or `[]` when the input is not an object). On a LangServe route (`.../invoke`) probe reads the
chain's input schema from the sibling `input_schema` route and builds the body from it; a 404 on a bare route
(`/rag`) whose `/rag/input_schema` answers points at `/rag/invoke`. Those reads are one GET each, to the
endpoint's own origin only, bounded in time and size.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from ragjudge.endpoint.probing import ProbeClient

# FastAPI on pydantic 2 says `missing` and `dict_type`; on pydantic 1 (FastAPI before 0.100, still common)
# `value_error.missing` and `type_error.dict`.
_MISSING_TYPES = frozenset({"missing", "value_error.missing"})
_OBJECT_TYPES = frozenset({"dict_type", "model_type", "model_attributes_type", "type_error.dict"})
_LANGSERVE_BODY_FIELDS = frozenset({"input", "config", "kwargs"})
_LANGSERVE_ROUTES = ("invoke", "batch", "stream", "stream_log", "stream_events")
_QUESTION_NAMES = ("question", "query", "input", "text", "message", "prompt")
SCHEMA_CHARS = 300
"""How much of an input schema is quoted."""


def body_example(path: Sequence[str], value: str = "{{ question | tojson }}") -> str:
    """`{"a": {"b": {{ question | tojson }}}}` for the path a.b: a body template that puts the question there."""
    text = value
    for name in reversed(path):
        text = "{" + json.dumps(name) + ": " + text + "}"
    return text


def _body_path(loc: list[Any]) -> list[str] | None:
    """The body path a 422 `loc` names; None when it names none (a query parameter, a header)."""
    parts = [str(part) for part in loc]
    if parts and parts[0] == "body":
        return parts[1:] or None
    if parts and parts[0] in ("query", "header", "path", "cookie"):
        return None
    # LangServe: relative to the body, or to the chain's input inside it.
    return parts if parts and parts[0] in _LANGSERVE_BODY_FIELDS else ["input", *parts]


def _field_hints(detail: list[Any]) -> tuple[list[str], bool]:
    """Hints from each error, and whether any concerns the chain's `input`."""
    hints: list[str] = []
    about_input = False
    for item in detail:
        loc = item.get("loc") if isinstance(item, dict) else None
        path = _body_path(loc) if isinstance(loc, list) else None
        if path is None:
            continue
        about_input = about_input or path[0] == "input"
        where = ".".join(path)
        if item.get("type") in _MISSING_TYPES:
            hints.append(
                f"the server wants a body field {where!r}: set endpoint.body to something like '{body_example(path)}'"
            )
        elif item.get("type") in _OBJECT_TYPES:
            hints.append(
                f"the server wants body field {where!r} to be an object of the fields it takes (a LangServe "
                f"route lists them at .../input_schema): e.g. '{body_example([*path, 'question'])}'"
            )
    return hints, about_input


def _sibling(url: str, route: str, *, replace_last: bool) -> str:
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    base = path.rsplit("/", 1)[0] if replace_last else path
    return urlunsplit((parts.scheme, parts.netloc, f"{base}/{route}", "", ""))


def _last_segment(url: str) -> str:
    return urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1]


def _schema(client: ProbeClient, url: str, beside: str) -> tuple[dict[str, Any], str] | None:
    """The JSON schema a GET of `url` answers with, and its text as quoted; None when there is none."""
    reply = client.fetch_get(url, beside)
    if reply is None or reply.status != 200:
        return None
    try:
        schema = json.loads(reply.body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(schema, dict):
        return None
    text = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    return schema, text if len(text) <= SCHEMA_CHARS else text[: SCHEMA_CHARS - 1] + "…"


def _input_example(schema: dict[str, Any]) -> str | None:
    """A body for a chain whose input schema is `schema`: the question in its string field, or as the input."""
    if schema.get("type") == "string":
        return body_example(["input"])
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return None
    listed = schema.get("required")
    required = [k for k in listed if isinstance(k, str)] if isinstance(listed, list) else []
    required = required or [str(k) for k in properties]
    strings = [k for k in required if isinstance(properties.get(k), dict) and properties[k].get("type") == "string"]
    named = [k for k in _QUESTION_NAMES if k in strings]
    field = (named or strings or required)[0]
    return body_example(["input", field])


def body_hints(data: Any, url: str, client: ProbeClient) -> list[str]:
    """What a 422 says the body lacks, as hints; on a LangServe route, the body its input schema asks for."""
    detail = data.get("detail") if isinstance(data, dict) else None
    if not isinstance(detail, list):
        return []
    hints, about_input = _field_hints(detail)
    if about_input and _last_segment(url) in _LANGSERVE_ROUTES:
        schema_url = _sibling(url, "input_schema", replace_last=True)
        found = _schema(client, schema_url, url)
        example = _input_example(found[0]) if found else None
        if found and example:
            # The schema is the service's own word: it replaces the guesses made from one error at a time.
            return [
                f"the chain's input schema (GET {urlsplit(schema_url).path}) is {found[1]}: set endpoint.body to "
                f"something like '{example}'"
            ]
    return hints


def route_hints(url: str, client: ProbeClient) -> list[str]:
    """What a 404 could have meant: a LangServe chain's bare path (`/rag`, whose `/rag/input_schema` answers) is
    `/rag/invoke`; otherwise the POST routes under the path that the service's OpenAPI document lists (FastAPI
    serves it at `/openapi.json`: hayhooks' `/support_rag` is `/support_rag/run`)."""
    path = urlsplit(url).path.rstrip("/")
    if _last_segment(url) not in (*_LANGSERVE_ROUTES, "input_schema", ""):
        schema_url = _sibling(url, "input_schema", replace_last=False)
        if _schema(client, schema_url, url) is not None:
            invoke = urlsplit(_sibling(url, "invoke", replace_last=False)).path
            return [
                f"{path} is not a route, but GET {urlsplit(schema_url).path} answers as a LangServe chain does: "
                f"POST to {invoke} (set endpoint.url to end in {invoke})"
            ]
    parts = urlsplit(url)
    found = _schema(client, urlunsplit((parts.scheme, parts.netloc, "/openapi.json", "", "")), url)
    routes = found[0].get("paths") if found else None
    if not isinstance(routes, dict):
        return []
    posts = sorted(
        str(p)
        for p, methods in routes.items()
        if isinstance(methods, dict) and "post" in methods and str(p).startswith(f"{path}/")
    )
    if not posts:
        return []
    shown = ", ".join(posts[:5]) + (f" and {len(posts) - 5} more" if len(posts) > 5 else "")
    return [f"{path} is not a route; the service's /openapi.json lists POST {shown}: set endpoint.url to one of them"]
