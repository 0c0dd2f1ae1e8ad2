"""Cases written by the judge's model from one document at a time (`ragjudge cases generate`).

The model is shown one document as `<document id="…">…</document>` and asked for a number of questions, of
out-of-scope questions, or of two-turn conversations, in the document's language; it replies
`{"cases": [{"question", "expected": [...], "quote"}]}` (a conversation is two consecutive entries). The reply
goes through the judge's own caller and asker: the same client, key, retries, cache and one corrective retry
for a reply that is not that JSON. Each case is then held to the document (`cases.candidates`): a point or a
quote the document does not hold gets one corrective retry naming it, and what misfits again is dropped with
its reason. A question in another language is dropped at once. Nothing is dropped without a reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ragjudge.cases.candidates import misfit
from ragjudge.cases.corpus import Document
from ragjudge.cases.language import NAMES, Language, language_of
from ragjudge.config.judge_config import JudgeConfig
from ragjudge.judge.asking import Asker, Tally
from ragjudge.judge.budget import EXHAUSTED, Budget
from ragjudge.judge.cache import JudgeCache
from ragjudge.judge.chat import CallFailed, ChatCaller, Target
from ragjudge.judge.interface import LogFn
from ragjudge.judge.prompting import Message, fence_tags, inert, template
from ragjudge.judge.replies import schema_format, validated

Kind = Literal["questions", "out_of_scope", "conversation"]
FEWER = "fewer than asked"
"""The reason counted for the cases the model did not give, after its retry."""
MORE = "more than asked"
"""The reason counted for cases past the number asked (they are not kept)."""
FAILED = "model call failed"
"""The reason counted for the cases of a document whose call failed."""
NOT_GENERATED = "not generated (budget exhausted)"
"""The reason counted for the cases of a document whose call the budget refused (`--max-calls`, `--budget-usd`)."""
_TAGS = fence_tags("document")


class GeneratedItem(BaseModel):
    """One question as the model wrote it."""

    model_config = ConfigDict(extra="forbid")

    question: str
    expected: list[str]
    quote: str


class GenerationReply(BaseModel):
    """`{"cases": [...]}`: the model's reply to a generation prompt."""

    model_config = ConfigDict(extra="ignore")

    cases: list[GeneratedItem]


@dataclass(frozen=True)
class Drop:
    """A case the model wrote and that is not kept."""

    reason: str
    """What is counted (`cases.candidates` names them, or `FEWER`, `MORE`, `FAILED`)."""
    detail: str
    """What exactly, for the summary."""


@dataclass
class Outcome:
    """What one document gave for one kind: the cases kept (each a group: one question, or a conversation's two
    turns), those dropped, and the calls it took."""

    document: Document
    kind: Kind
    asked: int
    kept: list[tuple[GeneratedItem, ...]] = field(default_factory=list)
    drops: list[Drop] = field(default_factory=list)
    calls: int = 0
    retried: int = 0
    """Cases asked again after the first reply (misfits, and cases it did not give)."""
    failure: str | None = None
    """Why the model could not be asked (the cases asked for are counted under `FAILED`)."""


def _per(kind: Kind) -> int:
    return 2 if kind == "conversation" else 1


def _unit(kind: Kind, count: int) -> str:
    noun = {"questions": "question", "out_of_scope": "out-of-scope question", "conversation": "conversation"}[kind]
    return f"{noun}{'' if count == 1 else 's'}"


def _inert(text: str) -> str:
    """The document's own text cannot close (or open) the tag it is shown in, however it spells it."""
    return inert(text, _TAGS)


def _attribute(text: str) -> str:
    """A value inside the tag's quotes: no quote, no bracket of its own to end the attribute or the tag."""
    return _inert(text).replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def messages_for(document: Document, kind: Kind, count: int, language: Language) -> list[Message]:
    system = template("generate_system.j2").render(kind=kind, count=count, language=NAMES[language])
    user = template("generate_user.j2").render(
        id=_attribute(document.id),
        title=_attribute(document.title),
        text=_inert(document.text),
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class Generator:
    """Asks the judge's model for cases, one document per call; thread-safe."""

    def __init__(self, config: JudgeConfig, log: LogFn | None = None, spend: Budget | None = None) -> None:
        self.config = config
        self.caller = ChatCaller(config)
        self.asker = Asker(config, self.caller, JudgeCache(config.cache), spend)
        self.target = Target(config.model, config.base_url)
        self.schema = schema_format("ragjudge_generate", GenerationReply)
        self._log: LogFn = log or (lambda entry: None)

    def _ask(self, messages: list[Message], outcome: Outcome) -> tuple[GenerationReply, str]:
        tally = Tally()
        try:
            reply: tuple[GenerationReply, str] = self.asker.ask(
                self.target,
                "generate",
                messages,
                self.schema,
                lambda text: (validated(text, GenerationReply), text),
                0,
                self._log,
                tally,
                label="generation",
            )
        finally:
            outcome.calls += tally.calls
        return reply

    def generate(self, document: Document, kind: Kind, count: int) -> Outcome:
        """`count` cases of `kind` from `document` (a conversation counts one), checked, with one retry."""
        outcome = Outcome(document, kind, count)
        language = language_of(document.text)
        if language is None or count <= 0:
            return outcome
        messages = messages_for(document, kind, count, language)
        try:
            reply, raw = self._ask(messages, outcome)
            retry, problems = self._sort(outcome, reply.cases, count, language, final=False)
            if not retry:
                return outcome
            outcome.retried = retry
            correction = template("generate_correction.j2").render(
                problems=problems, count=retry, unit=_unit(kind, retry)
            )
            again = [*messages, {"role": "assistant", "content": raw}, {"role": "user", "content": correction}]
            reply, _ = self._ask(again, outcome)
            self._sort(outcome, reply.cases, retry, language, final=True)
        except CallFailed as exc:
            outcome.failure = exc.reason
            missing = count - len(outcome.kept) - sum(1 for d in outcome.drops if d.reason != MORE)
            why = NOT_GENERATED if exc.reason.startswith(EXHAUSTED) else FAILED
            outcome.drops.extend(Drop(why, exc.reason) for _ in range(missing))
        return outcome

    def _sort(
        self, outcome: Outcome, items: Sequence[GeneratedItem], count: int, language: Language, final: bool
    ) -> tuple[int, list[str]]:
        """Keep the cases that fit, drop the others with their reason; on the first reply, how many to ask again
        and why (misfits the model may fix, and the cases it did not give)."""
        per = _per(outcome.kind)
        answered = outcome.kind != "out_of_scope"  # an out-of-scope question comes with no points
        groups = [tuple(items[k : k + per]) for k in range(0, len(items) - len(items) % per, per)]
        problems: list[str] = []
        retry = 0
        for number, group in enumerate(groups, 1):
            if number > count:
                outcome.drops.append(Drop(MORE, f"{len(groups)} given, {count} asked"))
                continue
            misfits = (
                misfit(i.question, i.expected, i.quote, outcome.document.text, language, answered) for i in group
            )
            wrong = next((m for m in misfits if m is not None), None)
            if wrong is None:
                outcome.kept.append(group)
            elif wrong.retry and not final:
                retry += 1
                problems.append(f"{_unit(outcome.kind, 1)} {number}: {wrong.detail}")
            else:
                outcome.drops.append(Drop(wrong.reason, f"{wrong.detail}: {group[0].question}"))
        short = max(0, count - len(groups))
        if short and final:
            outcome.drops.extend(Drop(FEWER, f"{len(groups)} given, {count} asked") for _ in range(short))
        elif short:
            retry += short
            problems.append(f"{count} {_unit(outcome.kind, count)} asked, {len(groups)} given")
        return retry, problems
