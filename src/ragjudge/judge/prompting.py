"""Building the judge messages from the `.j2` prompt files."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from jinja2 import Environment, StrictUndefined, Template

from ragjudge import masking
from ragjudge.cases.case import Case
from ragjudge.endpoint.trace import Passage, Trace
from ragjudge.judge.criteria import Criterion
from ragjudge.judge.interface import EVIDENCE_DIMENSIONS, NEGATIVE_DIMENSIONS, RUBRIC_DIMENSIONS
from ragjudge.judge.reference import split_reference

Message = dict[str, str]
GATE_TEMPLATES = (
    "combined_system.j2",
    "criteria.j2",
    "reference.j2",
    "combined_user.j2",
    "rubric_system.j2",
    "negative_system.j2",
    "rubric_user.j2",
    "faithfulness_system.j2",
    "faithfulness_user.j2",
    "correction.j2",
)
"""The prompts the gate's judge may send (the evidence judge's are calibration's)."""


@cache
def template(name: str) -> Template:
    text = resources.files("ragjudge.judge").joinpath("prompts", name).read_text(encoding="utf-8")
    env = Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
    return env.from_string(text)


def prompt_sources() -> str:
    """Every prompt file's text, for the judge fingerprint."""
    names = sorted(p.name for p in resources.files("ragjudge.judge").joinpath("prompts").iterdir())
    # `cases generate`'s prompts write cases, they judge nothing: a change to them must not stale a calibration.
    return "\n".join(
        f"--- {n}\n{template_text(n)}" for n in names if n.endswith(".j2") and not n.startswith(GENERATE_PREFIX)
    )


GENERATE_PREFIX = "generate_"
"""The prompt files of `cases generate` (judge/generator.py), left out of the judge's fingerprint."""


def template_text(name: str) -> str:
    return resources.files("ragjudge.judge").joinpath("prompts", name).read_text(encoding="utf-8")


FENCES = ("answer", "earlier_question", "earlier_answer")
"""The tags untrusted text sits between in the judge prompts: the answer, and a conversation's earlier turns."""


_OPEN = "<\uff1c\ufe64\u2039\u2329\u3008"
_CLOSE = ">\uff1e\ufe65\u203a\u232a\u3009"
"""Brackets a reader (a model) may take for `<` and `>`: the ASCII ones and their full-width, small and angle
look-alikes (`＜/document＞`)."""
_INVISIBLE = "[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]*"
"""Characters that show as nothing: `</doc\u200bument>` reads as `</document>`."""


def fence_tags(*tags: str) -> re.Pattern[str]:
    """Anything a reader could take for one of `tags`, opening or closing: any case, spaces or invisible characters
    inside, attributes, look-alike brackets, and an opening never closed (`<document id="x`, in an attribute)."""
    names = "|".join(_INVISIBLE.join(re.escape(c) for c in tag) for tag in tags)
    gap = rf"(?:\s|{_INVISIBLE[:-1]})*"
    return re.compile(rf"[{_OPEN}]({gap}/?{gap}(?:{names})\b[^{_OPEN}{_CLOSE}]*)([{_CLOSE}])?", re.IGNORECASE)


def inert(text: str, fences: re.Pattern[str]) -> str:
    """Untrusted text that sits between tags, unable to close them (or open new ones, its own kind or another's),
    however the tag is spelt: its brackets become entities, so the words stay readable. Every prompt that shows
    untrusted text between tags passes it through here, with the pattern of its own tags (`fence_tags`)."""
    return fences.sub(lambda m: f"&lt;{m.group(1)}" + ("&gt;" if m.group(2) else ""), text)


_FENCE_TAG = fence_tags(*FENCES)


def _untrusted(text: str) -> str:
    return inert(text, _FENCE_TAG)


@dataclass(frozen=True)
class Shown:
    """Untrusted text as the judge is shown it: cut to its bound, and unable to leave its tags."""

    text: str
    """The text, cut, with every fence tag in it made inert."""
    length: int
    """Its length in characters before the cut."""
    cut_at: int | None
    """The characters shown when it was cut (the bound); None when it is shown whole."""


def shown(text: str, limit: int | None) -> Shown:
    """`text` cut to `limit` characters (None: whole), then escaped: cut first, so an escape is never split.

    Secrets are masked before the cut: a secret cut in two would no longer be recognised, and its first half
    would reach the judge."""
    cut = limit is not None and len(text) > limit
    masked = masking.mask(text) if cut else text  # whole, it is masked with the rest of the prompt
    return Shown(_untrusted(masked[:limit] if cut else text), len(text), limit if cut else None)


@dataclass(frozen=True)
class RubricPlan:
    dimensions: tuple[str, ...]
    """The judge's own rubric dimensions asked."""
    unassessable: tuple[str, ...]
    negative: bool
    criteria: tuple[Criterion, ...] = ()
    """The team's criteria asked beside them (answered, in-scope cases only)."""
    reference: tuple[str, ...] | None = None
    """The reference answer's points the answer is judged against (`split_reference`: ragjudge's, never the
    judge's choice); None when it is not asked."""

    @property
    def asked(self) -> tuple[str, ...]:
        """Every score the reply must hold: the dimensions, then the criteria by name."""
        return self.dimensions + tuple(c.name for c in self.criteria)


def rubric_plan(
    case: Case,
    trace: Trace,
    criteria: tuple[Criterion, ...] = (),
    reference: bool = False,
) -> RubricPlan:
    """What the judge is asked of one reply. A refusal, or a case that should be refused, gets the rubric alone:
    no reference and no criteria (there is no answer for them to be about)."""
    if not case.should_answer:
        return RubricPlan(NEGATIVE_DIMENSIONS, (), True)
    answered = not trace.refused and bool(trace.answer.strip())
    asked = criteria if answered else ()
    points = split_reference(case.expected) if answered and reference and case.expected is not None else ()
    against = points or None
    if not trace.evidence:
        dims = tuple(d for d in RUBRIC_DIMENSIONS if d not in EVIDENCE_DIMENSIONS)
        return RubricPlan(dims, EVIDENCE_DIMENSIONS, False, asked, against)
    return RubricPlan(RUBRIC_DIMENSIONS, (), False, asked, against)


def _blocks(plan: RubricPlan) -> dict[str, str]:
    """The criteria and reference instructions, rendered from their own prompt files (empty when not asked)."""
    criteria = template("criteria.j2").render(criteria=plan.criteria) if plan.criteria else ""
    reference = ""
    if plan.reference is not None:
        reference = template("reference.j2").render()
    return {"criteria_block": criteria, "reference_block": reference}


def _reference_fields(plan: RubricPlan) -> dict[str, object]:
    return {"reference_points": list(plan.reference) if plan.reference is not None else None}


def trimmed(passages: Sequence[Passage], max_chars: int, max_passages: int | None = None) -> list[Passage]:
    """The passages the judge is shown: the first `max_passages`, each cut to `max_chars`."""
    kept = passages if max_passages is None else passages[:max_passages]
    return [Passage(p.id, p.title, masked_cut(p.text, max_chars)) for p in kept]


def masked_cut(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, its secrets masked first: a secret at the bound, cut in two, would no
    longer be recognised and its first half would reach the judge (as `shown` does for the answer)."""
    return masking.mask(text)[:limit] if len(text) > limit else text


def trim_notes(case: Case, trace: Trace, max_chars: int, max_passages: int, max_answer_chars: int) -> list[str]:
    """What the judge was not shown, for the judgement's notes (an endpoint may return 100,000 passages, or an
    answer of 4.5 MB)."""
    notes = []
    if len(trace.answer) > max_answer_chars:
        notes.append(
            f"the judge saw the first {max_answer_chars} of the answer's {len(trace.answer)} characters "
            "(judge.max_answer_chars)"
        )
    earlier = sum(len(t) > max_answer_chars for e in case.history for t in (e.question, e.answer))
    if earlier:
        notes.append(
            f"{earlier} earlier question(s) or answer(s) of the conversation cut to {max_answer_chars} characters "
            "for the judge (judge.max_answer_chars)"
        )
    evidence = trace.evidence
    if len(evidence) > max_passages:
        notes.append(f"the judge saw the first {max_passages} of {len(evidence)} passages (judge.max_passages)")
    cut = sum(1 for p in evidence[:max_passages] if len(p.text) > max_chars)
    if cut:
        notes.append(f"{cut} passage(s) cut to {max_chars} characters for the judge (judge.max_passage_chars)")
    return notes


def _case_fields(
    case: Case, trace: Trace, max_chars: int, max_passages: int | None, max_answer_chars: int | None
) -> dict[str, object]:
    """What the rubric and combined user prompts show of one case and its reply."""
    return {
        "question": case.question,
        "should_answer": case.should_answer,
        "must_mention": list(case.must_mention),
        "confidence": trace.confidence,
        "answer": shown(trace.answer, max_answer_chars),
        "citations": list(trace.citations),
        "passages": trimmed(trace.evidence, max_chars, max_passages),
        # Earlier turns are untrusted like this answer (issue 27): each in its own tags, escaped, bounded alike.
        "conversation": [
            {"question": shown(e.question, max_answer_chars), "answer": shown(e.answer, max_answer_chars)}
            for e in case.history
        ],
        "turn": case.turn,
        "sources_unknown": trace.passages_unknown,
    }


def rubric_messages(
    case: Case,
    trace: Trace,
    plan: RubricPlan,
    max_chars: int,
    ask_declined: bool = False,
    max_passages: int | None = None,
    max_answer_chars: int | None = None,
) -> list[Message]:
    """`ask_declined` (`endpoint.refusal.judge`): the reply also says whether the answer declined.
    `max_answer_chars` (`judge.max_answer_chars`) bounds the answer and each earlier turn; None shows them whole."""
    system_name = "negative_system.j2" if plan.negative else "rubric_system.j2"
    system = template(system_name).render(
        dimensions=plan.asked,
        unassessable=plan.unassessable,
        ask_declined=ask_declined,
        conversation=bool(case.history),
        **_blocks(plan),
    )
    user = template("rubric_user.j2").render(
        **_case_fields(case, trace, max_chars, max_passages, max_answer_chars), **_reference_fields(plan)
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def combined_messages(
    case: Case,
    trace: Trace,
    plan: RubricPlan,
    max_chars: int,
    ask_declined: bool = False,
    max_passages: int | None = None,
    max_answer_chars: int | None = None,
) -> list[Message]:
    """The rubric (positive or negative, as `plan` says) and the claim audit, asked in one request."""
    system = template("combined_system.j2").render(
        dimensions=plan.asked,
        unassessable=plan.unassessable,
        negative=plan.negative,
        ask_declined=ask_declined,
        conversation=bool(case.history),
        **_blocks(plan),
    )
    user = template("combined_user.j2").render(
        **_case_fields(case, trace, max_chars, max_passages, max_answer_chars), **_reference_fields(plan)
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def faithfulness_messages(
    trace: Trace, max_chars: int, max_passages: int | None = None, max_answer_chars: int | None = None
) -> list[Message]:
    system = template("faithfulness_system.j2").render()
    user = template("faithfulness_user.j2").render(
        answer=shown(trace.answer, max_answer_chars), passages=trimmed(trace.evidence, max_chars, max_passages)
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def correction_message(error: str) -> Message:
    return {"role": "user", "content": template("correction.j2").render(error=error)}
