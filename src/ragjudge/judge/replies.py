"""Judge replies, validated at the edge. A reply that fails here is never scored.

The schemas are the contract with the model; `response_format` is generated
from the same models so that what is asked and what is checked cannot drift.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, create_model, field_validator

from ragjudge.judge.reference import PointError, ReferencePoint, check_points
from ragjudge.safetext import clean_data

_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


class ReplyError(Exception):
    """The reply cannot be used; the message says why, for the retry and for the report."""


def strip_fence(text: str) -> str:
    match = _FENCE.match(text)
    return match.group(1) if match else text.strip()


class _RepeatedKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _keys_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) < len(pairs):
        seen: set[str] = set()
        raise _RepeatedKey(next(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return obj


def _decode(text: str) -> Any:
    cleaned = strip_fence(text)
    if not cleaned:
        raise ReplyError("the reply was empty")
    try:
        # Made safe here: `"\ud800"` in the judge's JSON would be a lone surrogate in the report.
        return clean_data(json.loads(cleaned, object_pairs_hook=_keys_once))
    except _RepeatedKey as exc:
        # `{"winner": "A", "winner": "B"}` read by its last value would be a verdict the reply also contradicts.
        raise ReplyError(f"the reply gives the key {exc.key!r} twice in one object; give each key once") from None
    except json.JSONDecodeError as exc:
        raise ReplyError(f"the reply is not a JSON object ({exc.msg} at character {exc.pos})") from None
    except RecursionError:
        raise ReplyError("the reply is nested too deeply to read") from None


def _explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False, include_input=False):
        loc = ".".join(str(p) for p in err["loc"]) or "reply"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


_Reply = TypeVar("_Reply", bound=BaseModel)


def validated(text: str, model: type[_Reply]) -> _Reply:
    """A judge's reply read as `model` (fences stripped, odd text made safe); ReplyError says what is wrong, each
    field in its place, for the corrective retry."""
    data = _decode(text)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        parts = [
            f"{'.'.join(str(p) for p in err['loc']) or 'reply'}: {str(err['msg']).removeprefix('Value error, ')}"
            for err in exc.errors(include_url=False, include_input=False)
        ]
        raise ReplyError("; ".join(parts)) from None


def schema_format(name: str, model: type[BaseModel]) -> dict[str, Any]:
    """The strict `json_schema` response_format for a reply checked against `model`."""
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": strict_schema(model.model_json_schema()), "strict": True},
    }


_NonBlank = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


def _rubric_fields(dimensions: Sequence[str]) -> dict[str, Any]:
    # The fields are the judge's keys by alias, under names of ragjudge's own: a criterion's name is the team's,
    # and one pydantic keeps for itself (`model_config`, `model_dump`, `json`) would break or shadow the model.
    score_fields: dict[str, Any] = {
        f"f{i}": (int, Field(..., alias=d, ge=1, le=5, strict=True)) for i, d in enumerate(dimensions)
    }
    # A reason of only whitespace is empty: strip before the length check.
    reason_fields: dict[str, Any] = {f"f{i}": (_NonBlank, Field(..., alias=d)) for i, d in enumerate(dimensions)}
    scores = create_model("Scores", __config__=ConfigDict(extra="forbid"), **score_fields)
    reasoning = create_model("Reasoning", __config__=ConfigDict(extra="forbid"), **reason_fields)
    return {"scores": (scores, ...), "reasoning": (reasoning, ...)}


_DECLINED: dict[str, Any] = {"declined": (bool, Field(..., strict=True))}
"""Asked with `endpoint.refusal.judge`: whether the answer declined the question."""


class PointVerdict(BaseModel):
    """One point of the reference answer and how the answer treats it."""

    model_config = ConfigDict(extra="forbid")

    point: str
    verdict: Literal["covered", "partial", "missing", "contradicted"]
    quote: str
    reason: _NonBlank


_POINTS: dict[str, Any] = {"reference_points": (list[PointVerdict], ...)}
"""Asked when the case has a reference answer (`judge.reference`)."""

# Real models add fields nobody asked for: an unknown top-level key is ignored (the log names it), while
# inside the scores, the reasoning and each verdict the shape stays exact.
_TOP = ConfigDict(extra="ignore")


def rubric_model(dimensions: Sequence[str], declined: bool = False, reference: bool = False) -> type[BaseModel]:
    """`{"scores": {dim: 1..5}, "reasoning": {dim: "..."}}` for exactly these dimensions (and `declined`, and the
    reference's points)."""
    return _rubric_model(tuple(dimensions), declined, reference)


@cache  # building a pydantic model is milliseconds of CPU; a run asks for the same few dimension sets
def _rubric_model(dimensions: tuple[str, ...], declined: bool = False, reference: bool = False) -> type[BaseModel]:
    extra = {**(_DECLINED if declined else {}), **(_POINTS if reference else {})}
    return create_model("RubricReply", __config__=_TOP, **_rubric_fields(dimensions), **extra)


class ClaimVerdict(BaseModel):
    """One claim of the answer and whether a passage supports it."""

    model_config = ConfigDict(extra="forbid")

    claim: str = Field(min_length=1)
    supported: bool
    evidence_id: str | None
    reason: str = Field(min_length=1)

    @field_validator("claim", "reason")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


class ClaimsReply(BaseModel):
    """`{"claims": [...]}`; an empty list means the answer makes no factual claim."""

    model_config = _TOP

    claims: list[ClaimVerdict]


def _loosen(data: Any) -> Any:
    """Accept the few spellings models use for a doubtful verdict: unclear counts as unsupported."""
    if isinstance(data, dict) and isinstance(data.get("claims"), list):
        for item in data["claims"]:
            if isinstance(item, dict) and isinstance(item.get("supported"), str):
                word = item["supported"].strip().lower()
                if word in {"true", "yes", "supported"}:
                    item["supported"] = True
                elif word in {"false", "no", "unsupported", "unclear", "partial", "partially", "unknown"}:
                    item["supported"] = False
            if isinstance(item, dict) and item.get("evidence_id") in ("", "null", "none", "None"):
                item["evidence_id"] = None
    return data


def combined_model(dimensions: Sequence[str], declined: bool = False, reference: bool = False) -> type[BaseModel]:
    """The rubric reply and the claims in one object: `{"scores", "reasoning", "claims"}` (and `declined`, and
    `reference_points`)."""
    return _combined_model(tuple(dimensions), declined, reference)


@cache
def _combined_model(dimensions: tuple[str, ...], declined: bool = False, reference: bool = False) -> type[BaseModel]:
    return create_model(
        "CombinedReply",
        __config__=_TOP,
        **_rubric_fields(dimensions),
        claims=(list[ClaimVerdict], ...),
        **(_DECLINED if declined else {}),
        **(_POINTS if reference else {}),
    )


def _drop_unasked(data: Any, dimensions: Sequence[str]) -> Any:
    if isinstance(data, dict):
        # A dimension the judge was told not to score is dropped, not held against it.
        for key in ("scores", "reasoning"):
            if isinstance(data.get(key), dict):
                data[key] = {k: v for k, v in data[key].items() if k in dimensions}
    return data


def _rubric_of(dumped: dict[str, Any]) -> tuple[dict[str, int], dict[str, str]]:
    return dict(dumped["scores"]), {k: v.strip() for k, v in dumped["reasoning"].items()}


def declined_of(text: str) -> bool:
    """The `declined` of a reply already validated with `declined=True`."""
    return bool(_decode(text)["declined"])


def parse_rubric(text: str, dimensions: Sequence[str], declined: bool = False) -> tuple[dict[str, int], dict[str, str]]:
    data = _drop_unasked(_decode(text), dimensions)
    try:
        model = rubric_model(dimensions, declined).model_validate(data)
    except ValidationError as exc:
        raise ReplyError(_explain(exc)) from None
    return _rubric_of(model.model_dump(by_alias=True))


def parse_judged(
    text: str,
    dimensions: Sequence[str],
    passage_ids: Sequence[str] | None,
    declined: bool,
    reference: str | Sequence[str] | None,
    answer: str,
) -> Parsed:
    """A rubric reply (`passage_ids` None) or a combined one, with the reference's points when `reference` is
    given: every part held to its checks, the first misfit named for the corrective retry."""
    data = _drop_unasked(_decode(text), dimensions)
    if passage_ids is not None:
        data = _loosen(data)
    make = rubric_model if passage_ids is None else combined_model
    try:
        model = make(dimensions, declined, reference is not None).model_validate(data)
    except ValidationError as exc:
        raise ReplyError(_explain(exc)) from None
    scores, reasoning = _rubric_of(model.model_dump(by_alias=True))
    claims = _shown(model.claims, passage_ids) if passage_ids is not None else None  # type: ignore[attr-defined]
    points = None
    if reference is not None:
        entries = [(p.point, p.verdict, p.quote, p.reason) for p in model.reference_points]  # type: ignore[attr-defined]
        try:
            points = check_points(entries, reference, answer)
        except PointError as exc:
            raise ReplyError(str(exc)) from None
    said = model.declined if declined else None  # type: ignore[attr-defined]
    return Parsed(scores, reasoning, claims, points, said)


@dataclass(frozen=True)
class Parsed:
    """One validated rubric or combined reply."""

    scores: dict[str, int]
    reasoning: dict[str, str]
    claims: list[ClaimVerdict] | None
    """None for a rubric reply."""
    points: tuple[ReferencePoint, ...] | None
    """None when the reference was not asked."""
    declined: bool | None


def ignored_keys(text: str, schema: dict[str, Any]) -> list[str]:
    """The top-level keys of a valid reply that its schema does not ask for (ignored, and logged)."""
    try:
        data = _decode(text)
    except ReplyError:
        return []
    asked = schema.get("json_schema", {}).get("schema", {}).get("properties", {})
    return sorted(str(k) for k in data if k not in asked) if isinstance(data, dict) and asked else []


def parse_claims(text: str, passage_ids: Sequence[str]) -> list[ClaimVerdict]:
    data = _loosen(_decode(text))
    try:
        reply = ClaimsReply.model_validate(data)
    except ValidationError as exc:
        raise ReplyError(_explain(exc)) from None
    return _shown(list(reply.claims), passage_ids)


def parse_combined(
    text: str, dimensions: Sequence[str], passage_ids: Sequence[str], declined: bool = False
) -> tuple[dict[str, int], dict[str, str], list[ClaimVerdict]]:
    """The rubric and the claims of one combined reply, held to the same checks as the separate replies."""
    data = _loosen(_drop_unasked(_decode(text), dimensions))
    try:
        model = combined_model(dimensions, declined).model_validate(data)
    except ValidationError as exc:
        raise ReplyError(_explain(exc)) from None
    scores, reasoning = _rubric_of(model.model_dump(by_alias=True))
    claims: list[ClaimVerdict] = model.claims  # type: ignore[attr-defined]
    return scores, reasoning, _shown(claims, passage_ids)


def _shown(claims: list[ClaimVerdict], passage_ids: Sequence[str]) -> list[ClaimVerdict]:
    """`claims`, if every supported claim names a passage that was shown; ReplyError otherwise."""
    known = set(passage_ids)
    for i, claim in enumerate(claims):
        if claim.supported and claim.evidence_id is None:
            raise ReplyError(f"claims.{i}: a supported claim must name its passage in evidence_id")
        if claim.supported and claim.evidence_id not in known:
            shown = ", ".join(passage_ids) or "none"
            raise ReplyError(
                f"claims.{i}.evidence_id: {claim.evidence_id!r} is not one of the passages shown ({shown})"
            )
    return claims


def response_format(
    kind: Literal["rubric", "claims", "combined"],
    dimensions: Sequence[str] = (),
    declined: bool = False,
    reference: bool = False,
) -> dict[str, Any]:
    """The `json_schema` response_format for a judge kind, generated from the models above (shared: do not
    modify it). `declined` adds the refusal classification (`endpoint.refusal.judge`), `reference` the
    reference's points."""
    return _response_format(kind, tuple(dimensions), declined, reference)


@cache
def _response_format(
    kind: Literal["rubric", "claims", "combined"], dimensions: tuple[str, ...], declined: bool, reference: bool
) -> dict[str, Any]:
    models = {"rubric": rubric_model, "combined": combined_model}
    model = models[kind](dimensions, declined, reference) if kind in models else ClaimsReply
    schema = model.model_json_schema()
    return {
        "type": "json_schema",
        "json_schema": {"name": f"ragjudge_{kind}", "schema": strict_schema(schema), "strict": True},
    }


def strict_schema(schema: Any) -> Any:
    """OpenAI's strict mode wants every property required and no titles or defaults."""
    if isinstance(schema, dict):
        out = {k: strict_schema(v) for k, v in schema.items() if k not in ("title", "default")}
        if out.get("type") == "object" and "properties" in out:
            out["required"] = list(out["properties"])
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [strict_schema(v) for v in schema]
    return schema
