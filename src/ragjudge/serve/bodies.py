"""Request bodies: at most 64 kB of JSON, nested at most 32 deep, validated with pydantic; unknown fields
are errors. Lone surrogates (`"\\ud800"`, valid JSON but not text) become U+FFFD as the body is read, so
nothing after it (a token comparison, a log line, an error echoing a field) meets a string it cannot encode.

`POST /v1/analyses` takes `{"name", "namespace", "treatment", "control", "checksum"}`; Flagger's
webhooks send `{"name", "namespace", "phase", "checksum", "metadata"}`, and `metadata` (a map of
strings, set per webhook in the Canary) may hold `sample_size`, `feedback_url`, `treatment`,
`control` and `token` (the bearer token, since Flagger cannot send headers).
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ragjudge.config.loader import format_validation_error
from ragjudge.serve.state import AnalysisSpec
from ragjudge.transport import urls

MAX_BODY_BYTES = 64 * 1024
MAX_DEPTH = 32
"""Lists and objects inside each other; Flagger's payload needs 2. Deeper is refused before parsing, which
recurses (60 kB of `[` was a RecursionError, a 500)."""
NAME_PATTERN = r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$"
METADATA_KEYS = ("sample_size", "feedback_url", "treatment", "control", "token")


class BadRequest(Exception):
    """HTTP 400, with a message naming the problem."""


def _http_url(value: str | None, field: str) -> str | None:
    if value is None:
        return None
    try:
        return urls.check_http_url(value)
    except ValueError as exc:
        raise ValueError(f"{field} {exc}") from None


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AnalysisBody(_Body):
    """`POST /v1/analyses`."""

    name: str = Field(pattern=NAME_PATTERN, description="The canary's name (a Kubernetes object name).")
    namespace: str = Field("default", pattern=NAME_PATTERN)
    treatment: str | None = None
    control: str | None = None
    checksum: str | None = Field(None, max_length=256, description="The revision under analysis, if known.")

    @field_validator("treatment", "control")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return _http_url(value, "the URL")

    def spec(self) -> AnalysisSpec:
        return AnalysisSpec(self.name, self.namespace, self.checksum, self.treatment, self.control)


class FlaggerPayload(_Body):
    """A Flagger webhook call."""

    name: str = Field(pattern=NAME_PATTERN)
    namespace: str = Field(pattern=NAME_PATTERN)
    phase: str | None = None
    checksum: str | None = Field(None, max_length=256)
    metadata: dict[str, str] | None = None

    @field_validator("metadata")
    @classmethod
    def _known_keys(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        for key in value or {}:
            if key not in METADATA_KEYS:
                raise ValueError(f"unknown metadata key {key!r} (known: {', '.join(METADATA_KEYS)})")
        meta = value or {}
        if "sample_size" in meta and not (meta["sample_size"].isdigit() and int(meta["sample_size"]) >= 1):
            raise ValueError("metadata.sample_size must be a whole number of at least 1")
        for key in ("feedback_url", "treatment", "control"):
            _http_url(meta.get(key), f"metadata.{key}")
        return value

    def spec(self) -> AnalysisSpec:
        meta = self.metadata or {}
        size = meta.get("sample_size")
        return AnalysisSpec(
            name=self.name,
            namespace=self.namespace,
            checksum=self.checksum,
            treatment=meta.get("treatment"),
            control=meta.get("control"),
            sample_size=int(size) if size is not None else None,
            feedback_url=meta.get("feedback_url"),
        )


_M = TypeVar("_M", bound=_Body)


_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _too_deep(text: str) -> bool:
    """Whether brackets outside strings nest deeper than MAX_DEPTH (a linear scan, no recursion)."""
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif token in "]}":
            depth -= 1
    return False


def _safe(value: Any) -> Any:
    """Strings with lone surrogates replaced by U+FFFD, all the way down (the depth is bounded already)."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_safe(v) for v in value]
    if isinstance(value, dict):
        return {_safe(k): _safe(v) for k, v in value.items()}
    return value


def parse_json(raw: bytes) -> Any:
    """The body as JSON, or BadRequest naming the problem (never echoing the body)."""
    if not raw:
        raise BadRequest("the request has no body; send a JSON object")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("the body is not UTF-8") from None
    if _too_deep(text):
        raise BadRequest(f"the body nests lists or objects deeper than {MAX_DEPTH} levels")
    try:
        return _safe(json.loads(text))
    except json.JSONDecodeError as exc:
        raise BadRequest(f"the body is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None


def validate(model: type[_M], data: Any) -> _M:
    if not isinstance(data, dict):
        raise BadRequest(f"the body must be a JSON object, not {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise BadRequest(format_validation_error("request body", exc).replace("unknown key", "unknown field")) from None
