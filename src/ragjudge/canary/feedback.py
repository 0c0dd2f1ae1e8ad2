"""Production feedback: thumbs-down and response counts per arm, from a file or a URL (Prometheus: see prometheus.py).

Counts that are present but impossible (an arm missing from a file, a negative count, more
dislikes than responses) are a `FeedbackError` (exit 2) naming the source and the arm: such data
never reaches the decision. Counts that are simply not there yet (a Prometheus query with no
series) leave that arm empty, which makes the dislike rule inconclusive, never a promote.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
from pydantic import BaseModel, ConfigDict, ValidationError

from ragjudge.errors import EvaluationError, FeedbackError
from ragjudge.repofiles.bounded import Bound, read_bounded
from ragjudge.transport.sessions import CutOff, bounded_request, watched_session
from ragjudge.transport.urls import public_url

ARMS = ("treatment", "control")
TIMEOUT_S = 30.0
MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class ArmFeedback:
    """One arm's production feedback."""

    dislikes: int
    """Thumbs-down count."""
    responses: int
    """Answers that could have been rated (the denominator)."""

    @property
    def rate(self) -> float | None:
        """dislikes / responses; None without responses."""
        return self.dislikes / self.responses if self.responses else None


@dataclass(frozen=True)
class Feedback:
    """Both arms' counts and where they came from."""

    source: str
    """`file feedback.json`, `url https://host/path`, `prometheus http://host:9090`: for messages."""
    treatment: ArmFeedback | None
    control: ArmFeedback | None
    missing: tuple[str, ...] = ()
    """Why an arm is None: data that is not there yet, so the dislike rule is inconclusive."""

    def arm(self, name: str) -> ArmFeedback | None:
        return self.treatment if name == "treatment" else self.control


def check_arm(source: str, arm: str, dislikes: int, responses: int) -> ArmFeedback:
    """Counts that can be true of one arm, or a FeedbackError naming the source and the arm."""
    tip = "fix the feedback source: counts are whole numbers >= 0 and dislikes <= responses"
    for name, value in (("dislikes", dislikes), ("responses", responses)):
        if value < 0:
            raise FeedbackError(f"{source}: {arm}: {name} is negative ({value})", tip=tip)
    if dislikes > responses:
        raise FeedbackError(
            f"{source}: {arm}: {dislikes} dislikes out of {responses} responses (dislikes cannot exceed responses)",
            tip=tip,
        )
    return ArmFeedback(dislikes=dislikes, responses=responses)


class _ArmCounts(BaseModel):
    model_config = ConfigDict(extra="ignore")

    dislikes: int
    responses: int


def parse_payload(data: Any, source: str) -> Feedback:
    """`{"treatment": {"dislikes": 31, "responses": 1000}, "control": {...}}`, validated."""
    if not isinstance(data, dict):
        raise FeedbackError(
            f"{source}: expected a JSON object with `treatment` and `control`, got {type(data).__name__}",
            tip='write {"treatment": {"dislikes": 31, "responses": 1000}, "control": {"dislikes": 30, ...}}',
        )
    arms: dict[str, ArmFeedback] = {}
    for arm in ARMS:
        raw = data.get(arm)
        if raw is None:
            raise FeedbackError(
                f"{source}: no counts for the {arm} arm",
                tip=f'add "{arm}": {{"dislikes": N, "responses": N}}',
            )
        try:
            counts = _ArmCounts.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors(include_input=False, include_url=False)[0]
            loc = ".".join(str(p) for p in first["loc"]) or "(value)"
            raise FeedbackError(
                f"{source}: {arm}.{loc}: {first['msg']}", tip="dislikes and responses are whole numbers"
            ) from None
        arms[arm] = check_arm(source, arm, counts.dislikes, counts.responses)
    return Feedback(source=source, treatment=arms["treatment"], control=arms["control"])


def _decode(raw: bytes, source: str) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FeedbackError(f"{source}: not valid JSON ({exc})") from None


MAX_FEEDBACK_BYTES = 1_000_000
"""A feedback file larger than this is refused (it holds a few counts)."""


def from_file(path: Path) -> Feedback:
    source = f"feedback file {path}"
    bound = Bound(
        MAX_FEEDBACK_BYTES,
        f"over {MAX_FEEDBACK_BYTES:,} bytes, more than two arms' counts",
        tip="the file holds {treatment: {dislikes, responses}, control: {...}}",
        missing="not found",
        missing_tip="pass --feedback with an existing file",
        error=FeedbackError,
    )
    try:
        # `canary.feedback.file` is in the config a pull request can edit: `/dev/zero` is refused, not read forever.
        raw = read_bounded(path, bound)
    except FeedbackError as exc:
        raise FeedbackError(f"feedback file {exc.message}", tip=exc.tip) from None
    return parse_payload(_decode(raw, source), source)


def session() -> requests.Session:
    """A session that ignores proxy settings from the environment, like the endpoint client."""
    return watched_session()


def from_url(url: str, headers: dict[str, str], timeout_s: float = TIMEOUT_S) -> Feedback:
    source = f"feedback url {public_url(url)}"
    try:
        with session() as s:
            # Not followed: a redirect would carry canary.feedback.headers (requests drops only Authorization
            # on another host) to wherever the feedback service points.
            response = bounded_request(
                s, "GET", url, timeout_s, headers={"Accept": "application/json", **headers}, allow_redirects=False
            )
    except CutOff as exc:
        raise EvaluationError(f"{source}: {exc}", tip="check that the metrics service is healthy") from None
    except requests.RequestException as exc:
        raise EvaluationError(
            f"{source}: cannot fetch the feedback counts ({type(exc).__name__})",
            tip="check canary.feedback.url and that the metrics service is reachable from here",
        ) from None
    if 300 <= response.status_code < 400:
        raise EvaluationError(
            f"{source}: HTTP {response.status_code}, a redirect (not followed: it would take the feedback headers "
            "with it)",
            tip="set canary.feedback.url to the address the redirect names",
        )
    if response.status_code >= 400:
        raise EvaluationError(
            f"{source}: HTTP {response.status_code}",
            tip="check canary.feedback.url and canary.feedback.headers (e.g. an Authorization header)",
        )
    if len(response.content) > MAX_BYTES:
        raise FeedbackError(f"{source}: reply over {MAX_BYTES} bytes")
    return parse_payload(_decode(response.content, source), source)
