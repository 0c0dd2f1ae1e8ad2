"""The Markdown comment: layout, escaping of hostile text, the 60,000-character cap, team templates."""

from __future__ import annotations

import html
import re
import time
from pathlib import Path

import pytest
from tests.fakes.rag import error_result, make_case, make_trace, ok_result
from tests.fakes.reports import make_report

from ragjudge.errors import ConfigError
from ragjudge.gate.scoring import CaseResult, score_case
from ragjudge.judge.interface import Judgement, Unscored
from ragjudge.judge.offline import OfflineJudge
from ragjudge.report.markdown import COMMENT_LIMIT, compiled, render_comment
from ragjudge.report.model import Report
from ragjudge.rules import Rule

FAITH = Rule("case", "faithfulness", ">=", 0.8)
PASS_ALL = Rule("suite", "pass_rate", ">=", 1.0)
LEXICAL_NOTE = (
    "<sub>Judge: the offline lexical judge. Faithfulness counts shared words (CJK: character bigrams) between "
    "each claim and the retrieved passages; it cannot tell a paraphrase from a contradiction.</sub>"
)
HOSTILE = (
    "Hi @octocat and @org/team! <img src=x onerror=alert(1)> | col | `rm -rf /` {{ 7*7 }} "
    "<!-- hidden --> </details> [link](http://x)"
)
HOSTILE_ID = "evil|`id`@octocat<img src=x onerror=alert(1)></details></summary>{{ 7*7 }}"
ALLOWED_TAGS = {"details", "/details", "summary", "/summary", "code", "/code", "br", "sub", "/sub"}


def markdown_text(escaped: str) -> str:
    """What a reader sees: backslash escapes and HTML entities resolved."""
    # The zero-width space after `@` is what keeps GitHub from mentioning anyone; it reads as nothing.
    return html.unescape(re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", escaped)).replace("\u200b", "")


def cells(row: str) -> int:
    """Column count of a Markdown table row: unescaped pipes minus one."""
    pipes, i = 0, 0
    while i < len(row):
        if row[i] == "\\":
            i += 2
            continue
        pipes += row[i] == "|"
        i += 1
    return pipes - 1


def table(comment: str, header: str) -> list[str]:
    """The table whose first row starts with `header`."""
    return next(found for found in tables(comment) if found[0].startswith(header))


def tables(comment: str) -> list[list[str]]:
    """Every table: consecutive lines starting with `|`."""
    found: list[list[str]] = []
    current: list[str] = []
    for line in comment.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            found.append(current)
            current = []
    if current:
        found.append(current)
    return found


def hostile_result() -> CaseResult:
    case = make_case(
        HOSTILE_ID,
        HOSTILE,
        golden=["d1"],
        must_mention=["<!-- @octocat | {{ 7*7 }} -->"],
    )
    trace = make_trace(
        HOSTILE + ". Shipping is free for @everyone.",
        ids=["doc|<b>@x</b>", "d1"],
        passages={"d1": "Refunds take five days."},
        confidence="high",
    )
    judgement = OfflineJudge().judge(case, trace, lambda _: None)
    return score_case(case, ok_result(trace), judgement, [FAITH])


@pytest.fixture
def hostile_report() -> Report:
    results = [
        hostile_result(),
        score_case(make_case("err-3"), error_result("endpoint error: HTTP 500 after 3 attempts"), None, [FAITH]),
        score_case(make_case("ok-1"), ok_result(make_trace()), None, []),
    ]
    return make_report(results, [FAITH], [PASS_ALL], warnings=["case 'dup@x' <b>duplicates</b> | another"])


@pytest.fixture
def hostile_comment(hostile_report: Report) -> str:
    return render_comment(hostile_report, report_path="out/report.json")


# --- layout -------------------------------------------------------------------------------------


def test_the_verdict_comes_first(hostile_comment: str) -> None:
    assert hostile_comment.splitlines()[0] == "## ❌ ragjudge: FAIL"


def test_the_headline_then_the_counts_and_judge(hostile_comment: str) -> None:
    lines = hostile_comment.splitlines()
    assert lines[2] == "**Blocked by pass\\_rate 0.333 &lt; 1. 2 more cases must pass.**"
    assert lines[4] == "1 of 3 cases passed · 1 failed · 1 errored · judge: offline-lexical"


def test_the_offline_judge_says_it_is_lexical(hostile_comment: str) -> None:
    assert LEXICAL_NOTE in hostile_comment.splitlines()


def test_a_model_judge_has_no_lexical_note() -> None:
    result = score_case(make_case("a"), ok_result(make_trace()), None, [])
    report = make_report([result], judge_info={"judge": "gpt-4o-mini", "provider": "openai", "lexical": False})
    comment = render_comment(report)
    assert "judge: gpt-4o-mini" in comment
    assert "lexical" not in comment


def test_suite_rules_show_value_against_threshold(hostile_comment: str) -> None:
    suite_table = table(hostile_comment, "| Suite rule")
    assert suite_table == [
        "| Suite rule | Value | Threshold | Result |",
        "|---|---|---|---|",
        "| <code>pass\\_rate</code> | 0.333 | &gt;= 1 | ❌ |",
    ]


def test_suite_rule_rows_for_each_outcome() -> None:
    result = score_case(make_case("a"), ok_result(make_trace(latency_ms=1234.0)), None, [])
    rules = [PASS_ALL, Rule("suite", "p95_latency_ms", "<=", 1000), Rule("suite", "cost_usd", "<=", 1)]
    rows = table(render_comment(make_report([result], [], rules)), "| Suite rule")[2:]
    assert rows == [
        "| <code>pass\\_rate</code> | 1.000 | &gt;= 1 | ✅ |",
        "| <code>p95\\_latency\\_ms</code> | 1234 | &lt;= 1000 | ❌ |",
        "| <code>cost\\_usd</code> | n/a | &lt;= 1 | ❌ |",
    ]


def test_case_rules_are_listed(hostile_comment: str) -> None:
    assert "Case rules: <code>faithfulness &gt;= 0.8</code>\n" in hostile_comment


def test_every_failing_and_errored_case_is_a_table_row_with_each_condition(hostile_comment: str) -> None:
    case_table = table(hostile_comment, "| Case")
    assert case_table[1] == "|---|---|---|"
    assert re.fullmatch(r"\| Case(&#8199;)+ \| Status \| Failed on \|", case_table[0])
    rows = case_table[2:]
    assert len(rows) == 2
    evil, err = rows
    assert err == "| <code>err-3</code> | error | endpoint error: HTTP 500 after 3 attempts |"
    assert evil.startswith("| <code>evil\\|\\`id\\`@\u200boctocat&lt;img src=x onerror=alert(1)&gt;")
    conditions = evil.split(" | ")[-1].removesuffix(" |").split("<br>")
    assert [markdown_text(c) for c in conditions] == [
        'missing required detail: "<!-- @octocat | {{ 7*7 }} -->"',
        "faithfulness 0.000 < 0.8 (3 of 3 claims unsupported: "
        '"Hi @octocat and @org/team!", '
        '"<img src=x onerror=alert(1)> | col | `rm -rf /` {{ 7*7 }} <!-- hidden --> </det…" and 1 more)',
    ]


def test_passing_cases_are_not_listed(hostile_comment: str) -> None:
    assert "ok-1" not in hostile_comment


def test_details_per_failing_case(hostile_comment: str) -> None:
    assert hostile_comment.count("<details>") == 2
    err_details = hostile_comment.split("<details><summary><code>err-3</code> · error</summary>")[1]
    err_details = err_details.split("</details>")[0]
    # The condition is in the case's row: the details do not repeat it.
    assert err_details == (
        "\n\nReproduce: <code>ragjudge probe --case err-3</code>"
        "\n\n**Question:** How long do refunds take?"
        "\n\n**Answer:** (no reply)"
        "\n\n**Retrieved:** (none)\n\n"
    )


def test_details_show_question_answer_retrieved_ids_and_reasons(hostile_comment: str) -> None:
    details = hostile_comment.split("<details>")[1].split("</details>")[0]
    lines = details.splitlines()
    question = next(line for line in lines if line.startswith("**Question:** "))
    answer = next(line for line in lines if line.startswith("**Answer:** "))
    retrieved = next(line for line in lines if line.startswith("**Retrieved:** "))
    assert markdown_text(question) == "**Question:** " + HOSTILE
    assert markdown_text(answer) == "**Answer:** " + HOSTILE + ". Shipping is free for @everyone."
    assert (
        retrieved
        == "**Retrieved:** <code>doc\\|&lt;b&gt;@\u200bx&lt;/b&gt;</code>, <code>d1</code> · confidence high · 100 ms"
    )
    assert "Unsupported claims:" in lines
    assert (
        "- Shipping is free for @\u200beveryone. (at most 0% of its words appear in any passage (needs 50%))" in lines
    )


def test_judge_reasons_and_unscored_judgements_are_shown() -> None:
    judgement = Judgement(
        judge="gpt-x",
        scores={"grounding": 2.0},
        reasoning={"grounding": "cites <b>nothing</b> @all"},
        unscored=(Unscored("faithfulness", "judge reply was not JSON | twice"),),
    )
    rules = [Rule("case", "judge.grounding", ">=", 4)]
    result = score_case(make_case("j1"), ok_result(make_trace()), judgement, rules)
    comment = render_comment(make_report([result], rules, judge_info={"judge": "gpt-x", "lexical": False}))
    lines = comment.splitlines()
    assert "Judge reasons:" in lines
    assert "- grounding 2.0: cites &lt;b&gt;nothing&lt;/b&gt; @\u200ball" in lines
    assert "Unscored judgements:" in lines
    assert "- faithfulness: judge reply was not JSON \\| twice" in lines


def test_a_passing_report() -> None:
    result = score_case(make_case("a"), ok_result(make_trace()), None, [])
    comment = render_comment(make_report([result]))
    assert comment.splitlines()[0] == "## ✅ ragjudge: PASS"
    assert "\nEvery case passed.\n" in comment
    assert "<details>" not in comment
    assert "Failing and errored cases" not in comment


def test_an_error_report() -> None:
    results = [
        score_case(make_case(f"e{i}"), error_result("endpoint error: timeout after 30 s (3 attempts)"), None, [])
        for i in range(2)
    ]
    comment = render_comment(make_report(results))
    assert comment.splitlines()[0] == "## ⚠️ ragjudge: ERROR"
    lines = comment.splitlines()
    assert lines[2] == (
        "**All 2 cases errored: the verdict is error; the error that dominated (2 of 2): endpoint error: "
        "timeout after 30 s (3 attempts).**"
    )
    assert "0 of 2 cases passed · 2 errored · judge: offline-lexical" in lines
    # One cause, said above the rows; each row says its condition in words, never a group's number.
    assert "**endpoint error: timeout after 30 s (3 attempts)** · 2 cases: <code>e0</code>, <code>e1</code>" in lines
    assert "| <code>e1</code> | error | endpoint error: timeout after 30 s (3 attempts) |" in lines
    assert "[1]" not in comment


def test_the_footer_has_latency_and_rates(hostile_comment: str) -> None:
    assert hostile_comment.rstrip("\n").splitlines()[-3:] == [
        "<sub>ragjudge 0.1.0 · p50 100 ms · p95 100 ms · faithfulness 0.000 · rejection accuracy 1.000"
        " · judge error rate 0.000</sub>",
        "",
        LEXICAL_NOTE,
    ]


# --- hostile text -------------------------------------------------------------------------------


def test_no_html_but_the_templates_own_tags(hostile_comment: str) -> None:
    assert "<img" not in hostile_comment.lower()
    assert "<b>" not in hostile_comment
    assert "<!--" not in hostile_comment
    tags = set(re.findall(r"<(/?[a-zA-Z]+)", hostile_comment))
    assert tags <= ALLOWED_TAGS


def test_nobody_is_mentioned(hostile_comment: str) -> None:
    assert re.search(r"@\w", hostile_comment) is None
    assert "@\u200boctocat" in hostile_comment
    assert "@\u200borg/team" in hostile_comment


def test_every_table_row_keeps_its_column_count(hostile_comment: str) -> None:
    for table in tables(hostile_comment):
        counts = {cells(row) for row in table}
        assert counts == {cells(table[0])}, table


def test_details_stay_balanced(hostile_comment: str) -> None:
    opened = hostile_comment.count("<details>")
    assert opened == 2
    assert hostile_comment.count("</details>") == opened
    assert hostile_comment.count("<summary>") == hostile_comment.count("</summary>") == opened


def test_summary_holds_the_hostile_id_as_text(hostile_comment: str) -> None:
    # <summary> is raw HTML (no Markdown inside), so it gets entities and no backslashes.
    summary = re.findall(r"<summary>(.*)</summary>", hostile_comment)[0]
    assert summary == (
        "<code>evil|`id`@\u200boctocat&lt;img src=x onerror=alert(1)&gt;&lt;/details&gt;&lt;/summary&gt;"
        "{{ 7*7 }}</code> · fail"
    )
    assert html.unescape(summary).replace("\u200b", "") == f"<code>{HOSTILE_ID}</code> · fail"


def test_template_syntax_in_data_is_never_evaluated(hostile_comment: str) -> None:
    assert "{{ 7\\*7 }}" in hostile_comment
    answer = next(line for line in hostile_comment.splitlines() if line.startswith("**Answer:** "))
    assert "{{ 7*7 }}" in markdown_text(answer)
    assert "49" not in hostile_comment


def test_links_and_code_cannot_open(hostile_comment: str) -> None:
    assert "[link](http://x)" not in hostile_comment
    assert "\\[link\\](http://x)" in hostile_comment
    for line in hostile_comment.splitlines():
        if not line.startswith("<details>"):  # raw HTML: backticks are plain text there
            assert re.search(r"(?<!\\)`", line) is None, line


def test_warnings_are_escaped_and_collapsed_by_kind() -> None:
    result = score_case(make_case("a"), ok_result(make_trace()), None, [])
    warnings = [f"warning {i} @x <b>" for i in range(13)]
    comment = render_comment(make_report([result], warnings=warnings))
    lines = comment.splitlines()
    assert "> ⚠️ warning 0 @\u200bx &lt;b&gt; (and 12 more like it)" in lines
    assert "warning 1 " not in comment


def test_many_kinds_of_warning_fold_into_one_details_block() -> None:
    result = score_case(make_case("a"), ok_result(make_trace()), None, [])
    warnings = [f"{word} went wrong" for word in ("this", "that", "the other", "a fourth thing")] * 3
    lines = render_comment(make_report([result], warnings=warnings)).splitlines()
    start = lines.index("<details><summary>⚠️ 12 warnings of 4 kinds</summary>")
    assert lines[start + 2 : start + 6] == [
        "- this went wrong (and 2 more like it)",
        "- that went wrong (and 2 more like it)",
        "- the other went wrong (and 2 more like it)",
        "- a fourth thing went wrong (and 2 more like it)",
    ]


# --- the cap ------------------------------------------------------------------------------------


def _many_failing(n: int, answer_chars: int) -> Report:
    results = []
    for i in range(n):
        case = make_case(f"case-{i:04d}", "Q " * 300, must_mention=["order number"])
        trace = make_trace(f"answer {i} " + "lorem ipsum " * (answer_chars // 12), ids=["d1", "d2"])
        results.append(score_case(case, ok_result(trace), None, []))
    return make_report(results)


def test_2000_failing_cases_stay_under_60000_characters_and_say_how_many_more() -> None:
    report = _many_failing(2000, 5000)
    started = time.monotonic()
    comment = render_comment(report, report_path="report.json")
    assert time.monotonic() - started < 10
    assert COMMENT_LIMIT == 60_000
    assert len(comment) <= 60_000
    rows = table(comment, "| Case")[2:]
    shown = len(rows)
    assert 100 < shown < 2000
    # The cause first, with one case, its answer and its repro line; then the rows, in report order, in words.
    cause = '**missing required detail: "order number"** · 2000 cases: <code>case-0000</code>, <code>case-0001</code>'
    assert cause in comment and comment.index(cause) < comment.index("| Case&#8199;")
    assert comment.index("Reproduce: <code>ragjudge probe --case case-0000</code>") < comment.index("| Case&#8199;")
    assert rows[0] == '| <code>case-0000</code> | fail | missing required detail: "order number" |'
    assert rows[-1].startswith(f"| <code>case-{shown - 1:04d}</code> | fail |")
    hidden = 2000 - shown
    assert (
        f"\n…and {hidden} more failing or errored case(s) not shown here: see the JSON report (report.json).\n"
        in comment
    )
    assert comment.count("<details>") == comment.count("</details>") == 0
    assert comment.rstrip("\n").endswith("</sub>")  # the layout ends normally, not cut off


def test_when_only_the_details_do_not_fit_they_are_cut_and_counted() -> None:
    report = _many_failing(60, 5000)
    comment = render_comment(report, report_path="report.json")
    assert len(comment) <= 60_000
    assert len(table(comment, "| Case")) - 2 == 60  # every case keeps its table row
    detailed = comment.count("<details>")
    assert 0 < detailed < 60
    assert comment.count("</details>") == detailed
    assert "not shown here: see the JSON report (report.json).\n" in comment
    assert (
        f"Details of {60 - detailed} more failing or errored case(s) are not shown here: "
        "see the JSON report (report.json)." in comment
    )
    assert "…and " not in comment


def test_when_everything_fits_nothing_is_said_about_more() -> None:
    comment = render_comment(_many_failing(3, 100))
    assert comment.count("<details>") == 3
    assert "more failing or errored" not in comment


def test_a_smaller_limit_is_honoured() -> None:
    comment = render_comment(_many_failing(50, 200), limit=2000)
    assert len(comment) <= 2000
    assert "more failing or errored case(s) not shown here: see the JSON report." in comment


def test_the_size_search_compiles_the_template_once() -> None:
    compiled.cache_clear()
    comment = render_comment(_many_failing(60, 5000), report_path="report.json")
    assert comment.count("<details>") < 60  # details were cut: the search rendered many times
    info = compiled.cache_info()
    assert (info.misses, info.hits > 3) == (1, True)


# --- templates ----------------------------------------------------------------------------------


def test_a_teams_own_template(tmp_path: Path) -> None:
    template = tmp_path / "team.md.j2"
    template.write_text(
        "{{ report.verdict | upper }} {{ s.passed }}/{{ s.cases }} by {{ judge_name }}\n"
        "{% for c in shown %}* {{ code_id(c.id) }}: {{ c.trace.answer | inline }}\n{% endfor %}",
        encoding="utf-8",
    )
    case = make_case("t1", must_mention=["receipt"])
    result = score_case(case, ok_result(make_trace("{{ 7*7 }} @you")), None, [])
    comment = render_comment(make_report([result]), template)
    assert comment == "FAIL 0/1 by offline-lexical\n* <code>t1</code>: {{ 7\\*7 }} @\u200byou\n"


def test_a_template_error_is_a_config_error_naming_the_file(tmp_path: Path) -> None:
    template = tmp_path / "bad.md.j2"
    template.write_text("{{ nope }}", encoding="utf-8")
    result = score_case(make_case("a"), ok_result(make_trace()), None, [])
    with pytest.raises(ConfigError) as info:
        render_comment(make_report([result]), template)
    assert info.value.message == f"{template}: comment template failed: 'nope' is undefined"


def test_templates_are_sandboxed(tmp_path: Path) -> None:
    template = tmp_path / "evil.md.j2"
    template.write_text("{{ ''.__class__.__mro__[1].__subclasses__() }}", encoding="utf-8")
    result = score_case(make_case("a"), ok_result(make_trace()), None, [])
    with pytest.raises(ConfigError, match=r"evil\.md\.j2: comment template failed: "):
        render_comment(make_report([result]), template)


def test_a_missing_template_is_a_config_error(tmp_path: Path) -> None:
    result = score_case(make_case("a"), ok_result(make_trace()), None, [])
    with pytest.raises(ConfigError, match=r"missing\.j2: cannot read the comment template"):
        render_comment(make_report([result]), tmp_path / "missing.j2")


def test_unscored_judgements_on_passing_cases_are_shown() -> None:
    from tests.fakes.rag import make_case, make_trace, ok_result
    from tests.fakes.reports import make_report

    from ragjudge.gate.scoring import score_case
    from ragjudge.judge.interface import Judgement, Unscored

    case = make_case("quiet")
    judgement = Judgement(judge="m", faithfulness=1.0, unscored=(Unscored("rubric", "judge reply invalid: tone"),))
    result = score_case(case, ok_result(make_trace()), judgement, [])
    assert result.status == "pass"
    report = make_report([result])
    text = render_comment(report)
    assert "**Unscored judgements on passing cases**" in text
    assert "- <code>quiet</code>: rubric: judge reply invalid: tone" in text
    assert "judge error rate 1.000" in text


def test_details_show_what_was_expected_beside_what_came_back() -> None:
    from dataclasses import replace

    case = replace(
        make_case("exp", golden=["doc-refund-1", "doc-refund-3"], must_mention=["5 days"], must_not_mention=["free"]),
        expected="Refunds take 5 working days.",
    )
    trace = replace(make_trace("I can't help with that.", ["doc-ship-2"], refused=True), refused_by="builtin")
    rules = [Rule("case", "context_recall", ">=", 1.0)]
    result = score_case(case, ok_result(trace), None, rules)
    comment = render_comment(make_report([result], rules, [PASS_ALL]))
    lines = comment.split("<details>")[1].split("</details>")[0].splitlines()
    assert [line for line in lines if line.startswith("**")] == [
        "**Question:** How long do refunds take?",
        "**Expected:** Refunds take 5 working days.",
        "**Answer:** I can't help with that. · declined (by builtin)",
        "**Golden:** <code>doc-refund-1</code>, <code>doc-refund-3</code>",
        "**Retrieved:** <code>doc-ship-2</code> · confidence high · 100 ms",
        "**Must mention:** 5 days",
        "**Must not mention:** free",
    ]
    # The condition is the case's row; the details do not repeat it.
    row = '| <code>exp</code> | fail | missing required detail: "5 days"<br>declined a question the corpus covers |'
    assert row in comment.splitlines()
    assert not any("missing required detail" in line for line in lines)
