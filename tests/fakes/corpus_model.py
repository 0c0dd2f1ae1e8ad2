"""A loopback model for `ragjudge cases generate`: a responder for `FakeOpenAI` that reads the document in the
request and writes its cases from it, and on purpose misbehaves for the documents it is told to.

It reads what the prompt asks (how many, of which kind, in which language) from the prompt's own words, and
answers each question with a sentence of the document, copied. Misbehaviours, by document id:

* `misfit_once`: the first reply's first case has a point the document does not hold; the retry fixes it;
* `misfit_twice`: the same, and the retry's replacement misfits too (dropped: not verbatim);
* `other_language`: the first case's question is in the other language (dropped at once);
* `duplicate`: the last case asks the first case's question again, in other case and punctuation;
* `empty_once`: the first reply is `{"cases": []}`; the retry gives them all;
* `empty_twice`: both replies are empty (counted: fewer than asked).

Only the questions misbehave; out-of-scope questions and conversations come right.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from typing import Any

from tests.fakes.openai_server import Reply

_DOC = re.compile(r'<document id="([^"]*)" title="([^"]*)">\n(.*)\n</document>', re.DOTALL)
INVENTED = {"en": "Refunds are paid in gold bars.", "zh": "退款以金条支付。"}
"""The point no document holds."""


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.findall(r"[^.。!?！？]+[.。!?！？]?", text) if s.strip()]


def _lang(text: str) -> str:
    return "zh" if re.search(r"[\u4e00-\u9fff]", text) else "en"


def ask(sentence: str, lang: str, n: int) -> str:
    """A question a sentence answers, in `lang`."""
    if lang == "zh":
        return f"请问{sentence[:10].rstrip('，。')}，这是怎么规定的？"
    words = re.findall(r"[A-Za-z0-9']+", sentence)
    return f"What is the rule that {' '.join(words[:7]).lower()}?"


class CorpusModel:
    """The responder (`FakeOpenAI(responder=CorpusModel({...}))`); records what it was asked, per document."""

    def __init__(self, misbehave: Mapping[str, str] | None = None) -> None:
        self.misbehave = dict(misbehave or {})
        self.asked: list[tuple[str, str, int, bool]] = []
        """(document id, kind, count, is a retry) for every call."""
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any], call_index: int) -> Reply:
        messages = body["messages"]
        system, user = messages[0]["content"], messages[1]["content"]
        match = _DOC.search(user)
        assert match is not None, user
        doc_id, text = match.group(1), match.group(3)
        retry = len(messages) > 2
        kind = (
            "conversation" if "two-turn" in system else "out_of_scope" if "does NOT answer" in system else "questions"
        )
        if retry:
            count = int(re.search(r"holding exactly (\d+) new", messages[-1]["content"]).group(1))  # type: ignore[union-attr]
        else:
            count = int(re.search(r"Write (\d+) ", system).group(1))  # type: ignore[union-attr]
        with self._lock:
            self.asked.append((doc_id, kind, count, retry))
        lang = _lang(text)
        cases = self._cases(text, lang, kind, count, retry, self.misbehave.get(doc_id, ""))
        return Reply(content=json.dumps({"cases": cases}, ensure_ascii=False))

    def _cases(self, text: str, lang: str, kind: str, count: int, retry: bool, how: str) -> list[dict[str, Any]]:
        if how == "empty_twice" or (how == "empty_once" and not retry):
            return []
        parts = sentences(text)
        # A retry asks about other sentences, and a conversation about the last ones.
        offset = (3 if retry else 0) + (4 if kind == "conversation" else 0)
        out: list[dict[str, Any]] = []
        for k in range(count):
            s = parts[(k + offset) % len(parts)]
            if kind == "out_of_scope":
                question = (
                    f"{s[:6]}的规定适用于海外仓库吗？"
                    if lang == "zh"
                    else f"Does the rule that {s.split()[0].lower()} {s.split()[1]} apply on Mars?"
                )
                out.append({"question": question, "expected": [], "quote": s})
            elif kind == "conversation":
                t = parts[(k + offset + 1) % len(parts)]
                follow = (
                    f"那{t[:4]}呢？"
                    if lang == "zh"
                    else f"And after that, what about {t.split()[-1].strip('.').lower()}?"
                )
                out.append({"question": ask(s, lang, k), "expected": [s], "quote": s})
                out.append({"question": follow, "expected": [t], "quote": t})
            else:
                out.append({"question": ask(s, lang, k), "expected": [s], "quote": s})
        if not out or kind != "questions":
            return out
        if how in ("misfit_once", "misfit_twice") and (not retry or how == "misfit_twice"):
            out[0]["expected"] = [INVENTED[lang]]
        if how == "other_language" and not retry:
            other = "en" if lang == "zh" else "zh"
            out[0]["question"] = ask(parts[0], other, 0) if other == "zh" else "What is the rule for this policy here?"
        if how == "duplicate" and not retry and len(out) > 1:
            out[-1]["question"] = out[0]["question"].upper().replace("?", " ?").replace("？", "")
        return out
