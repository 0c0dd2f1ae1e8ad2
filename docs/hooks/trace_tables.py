"""The trace conventions ragjudge reads (`ragjudge.traces.conventions.CONVENTIONS`) as Markdown tables: one row
per convention, made from its rows of data, so the page says what the code reads."""

from __future__ import annotations

from typing import Any


def _match(match: Any) -> str:
    parts = []
    if match.name:
        parts.append(f"span `{match.name}`")
    if match.name_prefix:
        parts.append(f"span name starts `{match.name_prefix}`")
    if match.attribute:
        if match.contains:
            parts.append(f"`{match.attribute}` contains `{match.contains}`")
        elif match.values:
            parts.append(f"`{match.attribute}` in " + ", ".join(f"`{v}`" for v in match.values))
        else:
            parts.append(f"`{match.attribute}` set")
    return " and ".join(parts) or "any span"


def _codes(values: Any) -> str:
    return ", ".join(f"`{v}`" for v in values) or "—"


def _id(row: Any) -> str:
    """Where a document's id is read: the team's key among its metadata first, then the row's id paths."""
    key = f"`{row.default_id_key}` (or `traces.id_key`)" if row.default_id_key else "`traces.id_key`, when set,"
    where = " or ".join("the document" if m == "" else f"`{m}`" for m in row.meta_paths)
    return (f"{key} in {where}, else " if row.meta_paths else "") + _codes(row.id_paths)


def render(conventions: Any) -> str:
    lines = [
        "| convention | passages from | a document's id | text | tokens (in / out) | tool calls | timings | "
        "conversation id |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in conventions:
        docs = "; ".join(
            f"`{d.attribute}`{' (flattened: `.<i>.<key>`)' if d.layout == 'flattened' else ''}"
            f"{f', path `{d.path}`' if d.path else ''} on {_match(d.spans)}, the `{d.which}` span's"
            for d in c.documents
        )
        ids = "; ".join(_id(d) for d in c.documents)
        text = "; ".join(_codes(d.text_paths) for d in c.documents)
        tokens = (
            "; ".join(
                f"{f'in `{t.inside}`: ' if t.inside else ''}`{t.input}` / `{t.output}` on {_match(t.spans)}"
                for t in c.tokens
            )
            or "—"
        )
        tools = "; ".join(f"{_match(t.spans)}: `{t.name}`, `{t.arguments}`, `{t.result}`" for t in c.tools) or "—"
        timings = "; ".join(
            [f"retrieval: {_match(m)}" for m in c.retrieval_spans]
            + [f"generation: {_match(m)}" for m in c.generation_spans]
            + [f"first chunk: {_codes(c.ttfc_seconds)} (s)"] * bool(c.ttfc_seconds)
        )
        lines.append(
            f"| `{c.name}` | {docs or '—'} | {ids or '—'} | {text or '—'} | {tokens} | {tools} | {timings or '—'} | "
            f"{_codes(c.conversation_id)} |"
        )
    return "\n".join(lines) + "\n"
