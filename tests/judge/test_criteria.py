"""The team's criteria as the gate checks them before any call: a name is an identifier starting with a letter
(`_polite` and `__class__` are exit 2 wherever they are written), an inline criterion is a name a rule may use,
and an inline criterion named like a `judge.criteria` entry is exit 2, never a silent replacement."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.cli import main
from ragjudge.config.judge_config import CriterionConfig, check_criterion_name
from ragjudge.errors import CaseFileError
from ragjudge.judge.criteria import check_case_criteria, criteria_for, every_name
from tests.fakes.rag import RagServer, answer, make_case

POLITE = {"question": "Is the answer polite?", "score_1": "It is rude.", "score_5": "It is warm and courteous."}
Q = "How long do refunds take?"
A = "Refunds take 7 days."
NAME_RULE = "letters, digits and _, starting with a letter, at most 64 characters"


def _write(folder: Path, url: str, cases: list[dict[str, Any]], judge: dict[str, Any], gate: dict[str, Any]) -> None:
    (folder / "cases.yaml").write_text(yaml.safe_dump(cases, allow_unicode=True), encoding="utf-8")
    config = {"endpoint": {"url": url, "retries": 0}, "judge": judge, "cases": ["cases.yaml"], "gate": gate}
    (folder / "ragjudge.yml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- names: an identifier that starts with a letter ---------------------------------------------------


@pytest.mark.parametrize("name", ["_polite", "__class__"])
def test_a_name_with_a_leading_underscore_in_judge_criteria_is_exit_2_naming_it(
    ws: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    _write(ws, "http://127.0.0.1:9/ask", [{"id": "c1", "question": Q}], {"criteria": {name: POLITE}}, {})
    assert main(["run"]) == 2
    assert capsys.readouterr().err == (
        f"ragjudge: error: ragjudge.yml: judge.criteria: {name!r} is not a criterion name: letters, digits and _, "
        "starting with a letter, at most 64 characters\nTip: see docs/configuration.md for every key\n"
    )


@pytest.mark.parametrize("name", ["_polite", "__class__"])
def test_a_name_with_a_leading_underscore_inline_in_a_case_is_exit_2_naming_the_case(
    ws: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    _write(ws, "http://127.0.0.1:9/ask", [{"id": "c1", "question": Q, "criteria": {name: POLITE}}], {}, {})
    assert main(["run"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == (
        f"ragjudge: error: {ws / 'cases.yaml'}:1: case 'c1': criteria: {name!r} is not a criterion name: letters, "
        "digits and _, starting with a letter, at most 64 characters"
    )


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("polite", None),
        ("Polite_2", None),
        ("p", None),
        ("a" * 64, None),
        ("a" * 65, f"{'a' * 65!r} is not a criterion name: {NAME_RULE}"),
        ("_polite", f"'_polite' is not a criterion name: {NAME_RULE}"),
        ("9lives", f"'9lives' is not a criterion name: {NAME_RULE}"),
        ("tone", "'tone' is a built-in judge dimension: give the criterion a name of its own"),
    ],
)
def test_the_name_rule(name: str, problem: str | None) -> None:
    assert check_criterion_name(name) == problem


# --- inline criteria through the gate ---------------------------------------------------------------


def test_a_new_inline_name_is_one_a_rule_may_use_through_the_gate(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [{"id": "c1", "question": Q, "criteria": {"own_tone": POLITE}}]
    with RagServer({Q: answer(A, ["d1"], {"d1": A})}) as rag:
        _write(ws, rag.url, cases, {"provider": "offline"}, {"case": {"criteria.own_tone": ">= 3"}})
        code = main(["run", "--report", "report.json"])
    out = capsys.readouterr().out
    # Accepted (not exit 2): the offline judge cannot score it, so the rule on it is the case's error.
    assert code == 3, out
    assert (
        "c1 error: criteria.own_tone unscored: the offline judge cannot score criteria (set judge.provider: openai)"
        in out
    )


def test_an_inline_criterion_named_like_a_judge_criteria_entry_is_exit_2_not_a_replacement(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [{"id": "c1", "question": Q, "criteria": {"polite": {**POLITE, "question": "Is it terse?"}}}]
    _write(ws, "http://127.0.0.1:9/ask", cases, {"criteria": {"polite": POLITE}}, {})
    assert main(["run"]) == 2
    assert capsys.readouterr().err == (
        f"ragjudge: error: {ws / 'cases.yaml'}:1: case 'c1': criteria: 'polite' is already defined in judge.criteria\n"
        "Tip: name it in the case's list to use that one, or give the case's own criterion another name\n"
    )


def test_check_case_criteria_and_every_name() -> None:
    polite = CriterionConfig(**POLITE)
    own = CriterionConfig(question="Is it short?", score_1="long", score_5="short")
    case = replace(make_case("c1"), inline_criteria=(("brief", own),))
    check_case_criteria([case], {"polite": polite})  # a new inline name: accepted
    assert every_name([case], {"polite": polite}) == {"polite", "brief"}
    assert [c.name for c in criteria_for(case, {"polite": polite})] == ["polite", "brief"]
    twice = replace(case, inline_criteria=(("polite", own),))
    with pytest.raises(
        CaseFileError, match=r"^.*: case 'c1': criteria: 'polite' is already defined in judge\.criteria$"
    ):
        check_case_criteria([twice], {"polite": polite})
