"""Case files: YAML and JSONL, the seeds' spellings, and errors that say where to look."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragjudge.cases.case import Case
from ragjudge.cases.caseset import load_cases
from ragjudge.cases.duplicates import normalize_question
from ragjudge.cli import main
from ragjudge.errors import CaseFileError, ExitCode


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    # The CLI reads ./ragjudge.yml when present: keep the working directory empty.
    monkeypatch.chdir(tmp_path)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(path: Path, *items: object) -> Path:
    return write(path, "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items))


def load_error(*paths: Path) -> CaseFileError:
    with pytest.raises(CaseFileError) as info:
        load_cases(list(paths))
    assert info.value.exit_code == ExitCode.BAD_INPUT
    return info.value


FULL_YAML = """\
- id: cs-001
  question: 我想退我上周买的耳机
  expected: 先询问订单号与购买渠道，再告知 7 天无理由退换流程
  golden_context_ids: [doc-refund-1, doc-refund-2]
  category: 退款
  should_answer: true
  must_mention: [订单号]
  must_not_mention: [不支持退款]
  source: human
  difficulty: easy
  tags: [refund, zh]

- id: cs-030
  question: 今天天气怎么样？
  category: 超纲
"""


# --- reading -------------------------------------------------------------------------------------


def test_yaml_with_every_field(tmp_path):
    path = write(tmp_path / "anchors.yaml", FULL_YAML)
    case_set = load_cases([path])

    first, second = case_set.cases
    assert first == Case(
        id="cs-001",
        question="我想退我上周买的耳机",
        expected="先询问订单号与购买渠道，再告知 7 天无理由退换流程",
        golden_context_ids=("doc-refund-1", "doc-refund-2"),
        category="退款",
        should_answer=True,
        must_mention=("订单号",),
        must_not_mention=("不支持退款",),
        source="human",
        difficulty="easy",
        tags=("refund", "zh"),
        origin=f"{path}:1",
    )
    assert second.id == "cs-030"
    assert second.origin == f"{path}:13"
    assert second.should_answer is False
    assert (second.golden_context_ids, second.must_mention, second.tags) == ((), (), ())
    assert case_set.warnings == ()


def test_jsonl_with_blank_lines_keeps_line_numbers(tmp_path):
    path = write(
        tmp_path / "cases.jsonl",
        '{"id": "a", "question": "How long do refunds take?"}\n'
        "\n"
        '{"id": "b", "question": "Where is my parcel?", "golden_context_ids": ["doc-ship-1"]}\n',
    )
    a, b = load_cases([path]).cases
    assert (a.id, a.origin) == ("a", f"{path}:1")
    assert (b.id, b.origin, b.golden_context_ids) == ("b", f"{path}:3", ("doc-ship-1",))


def test_a_jsonl_case_with_a_key_given_twice_is_an_error_naming_the_line_and_the_path(tmp_path):
    path = write(
        tmp_path / "cases.jsonl",
        '{"id": "a", "question": "q"}\n'
        '{"id": "b", "turns": [{"question": "t1"}, {"question": "t2", "expected": "x", "expected": "y"}]}\n',
    )
    with pytest.raises(CaseFileError) as raised:
        load_cases([path])
    assert raised.value.message == (
        f"{path}:2: key 'turns.1.expected' is given twice in one object (a JSON reader keeps the last without a word)"
    )
    assert raised.value.tip == "give each key once"


def test_ndjson_suffix_is_jsonl(tmp_path):
    path = jsonl(tmp_path / "cases.ndjson", {"id": "n1", "question": "q"})
    assert [c.id for c in load_cases([path]).cases] == ["n1"]


def test_yaml_mapping_with_a_cases_list(tmp_path):
    path = write(
        tmp_path / "suite.yaml", "version: 1\ncases:\n  - id: a\n    question: q1\n  - id: b\n    question: q2\n"
    )
    cases = load_cases([path]).cases
    assert [(c.id, c.origin) for c in cases] == [("a", f"{path}:3"), ("b", f"{path}:5")]


def test_utf8_with_bom_is_accepted(tmp_path):
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + "- id: a\n  question: 发票\n".encode())
    assert load_cases([path]).cases[0].question == "发票"


def test_several_files_in_order(tmp_path):
    one = write(tmp_path / "one.yaml", "- id: a\n  question: q1\n")
    two = jsonl(tmp_path / "two.jsonl", {"id": "b", "question": "q2"})
    assert [c.id for c in load_cases([one, two]).cases] == ["a", "b"]


def test_camel_case_spellings_of_the_seeds(tmp_path):
    path = jsonl(
        tmp_path / "seed.jsonl",
        {
            "id": "cs-002",
            "question": "耳机用了 5 天发现有问题能退吗？",
            "goldenContextIds": ["doc-refund-1"],
            "mustMention": ["订单号"],
            "mustNotMention": ["不能退"],
            "shouldAnswer": False,
        },
    )
    case = load_cases([path]).cases[0]
    assert case.golden_context_ids == ("doc-refund-1",)
    assert case.must_mention == ("订单号",)
    assert case.must_not_mention == ("不能退",)
    assert case.should_answer is False


def test_case_without_id_gets_one_from_file_and_position(tmp_path):
    path = write(tmp_path / "anchors.yaml", "- id: a\n  question: q1\n- question: q2\n")
    assert [c.id for c in load_cases([path]).cases] == ["a", "anchors-2"]


def test_numeric_id_becomes_text(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: 7\n  question: q\n")
    assert load_cases([path]).cases[0].id == "7"


@pytest.mark.parametrize(
    ("fields", "should_answer"),
    [
        ({}, True),
        ({"category": "退款"}, True),
        ({"category": "out_of_scope"}, False),
        ({"category": "超纲"}, False),
        ({"category": "Out-Of-Scope"}, False),
        ({"category": "out of scope"}, False),
        ({"category": " OOS "}, False),
        ({"category": "超出范围"}, False),
        ({"category": "OUT_OF_SCOPE", "should_answer": True}, True),
        ({"category": "超纲", "should_answer": True}, True),
        ({"category": "退款", "shouldAnswer": False}, False),
    ],
)
def test_should_answer_follows_the_category_unless_given(tmp_path, fields, should_answer):
    path = jsonl(tmp_path / "c.jsonl", {"id": "x", "question": "q", **fields})
    assert load_cases([path]).cases[0].should_answer is should_answer


def test_template_context_of_a_case(tmp_path):
    path = write(tmp_path / "anchors.yaml", FULL_YAML)
    assert load_cases([path]).cases[0].as_template_context() == {
        "id": "cs-001",
        "question": "我想退我上周买的耳机",
        "expected": "先询问订单号与购买渠道，再告知 7 天无理由退换流程",
        "golden_context_ids": ["doc-refund-1", "doc-refund-2"],
        "category": "退款",
        "should_answer": True,
        "tags": ["refund", "zh"],
        "source": "human",
        "difficulty": "easy",
    }


# --- errors --------------------------------------------------------------------------------------


def test_file_that_is_not_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "latin.yaml"
    path.write_bytes("- id: a\n  question: café au lait?\n".encode("latin-1"))
    err = load_error(path)
    assert err.message == f"{path}:2: not UTF-8 (invalid byte at offset 23)"
    assert err.tip == "re-save the file as UTF-8"


def test_jsonl_that_is_not_utf8(tmp_path):
    path = tmp_path / "gbk.jsonl"
    path.write_bytes(b'{"id": "a", "question": "ok"}\n' + '{"id": "b", "question": "退款"}\n'.encode("gbk"))
    assert load_error(path).message == f"{path}:2: not UTF-8 (invalid byte at offset 55)"


@pytest.mark.parametrize(
    ("name", "text"), [("e.yaml", ""), ("e.yaml", "[]\n"), ("e.yaml", "# nothing yet\n"), ("e.jsonl", "\n\n")]
)
def test_empty_case_set(tmp_path, name, text):
    path = write(tmp_path / name, text)
    err = load_error(path)
    assert err.message == f"{path}: the case set is empty"
    assert err.tip == "add at least one case with a question"


def test_empty_case_set_over_several_files_names_them_all(tmp_path):
    a = write(tmp_path / "a.yaml", "")
    b = write(tmp_path / "b.jsonl", "")
    assert load_error(a, b).message == f"{a}, {b}: the case set is empty"


def test_no_case_files_at_all():
    err = load_error()
    assert err.message == "no case files given"
    assert err.tip == "set `cases:` in ragjudge.yml or pass --cases FILE"


def test_missing_file(tmp_path):
    err = load_error(tmp_path / "nope.yaml")
    assert err.message == f"{tmp_path / 'nope.yaml'}: file not found"


def test_duplicate_id_names_both_places(tmp_path):
    path = write(
        tmp_path / "c.yaml", "- id: cs-1\n  question: q1\n\n- id: cs-2\n  question: q2\n- id: cs-1\n  question: q3\n"
    )
    err = load_error(path)
    assert err.message == f"{path}:6: case 'cs-1': duplicate id (first used at {path}:1)"
    assert err.tip == "give every case its own id"


def test_duplicate_id_across_files(tmp_path):
    one = write(tmp_path / "one.yaml", "- id: cs-1\n  question: q1\n")
    two = jsonl(tmp_path / "two.jsonl", {"id": "x", "question": "q"}, {"id": "cs-1", "question": "q2"})
    assert load_error(one, two).message == f"{two}:2: case 'cs-1': duplicate id (first used at {one}:1)"


def test_generated_id_that_collides_with_a_given_one(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: c-2\n  question: q1\n- question: q2\n")
    assert load_error(path).message == f"{path}:3: case 'c-2': duplicate id (first used at {path}:1)"


def test_case_without_a_question_by_id(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: a\n  question: q1\n- id: b\n  expected: an answer\n")
    err = load_error(path)
    assert err.message == f"{path}:3: case 'b': question: required field is missing"
    assert err.tip is not None and err.tip.startswith("fields are id, question, expected, golden_context_ids")


def test_case_without_a_question_or_id_is_named_by_index(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: a\n  question: q1\n- expected: an answer\n  tags: [x]\n")
    assert load_error(path).message == f"{path}:3: case #2: question: required field is missing"


def test_jsonl_case_without_a_question(tmp_path):
    path = jsonl(tmp_path / "c.jsonl", {"id": "a", "question": "q"}, {"expected": "x"})
    assert load_error(path).message == f"{path}:2: case #2: question: required field is missing"


def test_blank_question(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: a\n  question: '   '\n")
    assert load_error(path).message == f"{path}:1: case 'a': question: question is empty"


def test_unknown_field(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: a\n  question: q\n- id: b\n  question: q2\n  mustmention: [x]\n")
    assert load_error(path).message == f"{path}:3: case 'b': unknown field 'mustmention'"


def test_unknown_field_in_jsonl_together_with_a_missing_question(tmp_path):
    path = jsonl(tmp_path / "c.jsonl", {"id": "a", "qestion": "typo"})
    assert load_error(path).message == (
        f"{path}:1: case 'a': question: required field is missing; unknown field 'qestion'"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("  source: web\n", "source: Input should be 'public', 'human', 'reflow' or 'synthetic'"),
        ("  difficulty: extreme\n", "difficulty: Input should be 'easy', 'medium' or 'hard'"),
        ("  tags: refund\n", "tags: a list is expected, not a single text"),
        ("  should_answer: perhaps\n", "should_answer: Input should be a valid boolean, unable to interpret input"),
        ("  golden_context_ids: [[a]]\n", "golden_context_ids.0: Input should be a valid string"),
    ],
)
def test_bad_field_values_name_the_field(tmp_path, line, message):
    path = write(tmp_path / "c.yaml", "- id: 9\n  question: q\n" + line)
    assert load_error(path).message == f"{path}:1: case '9': {message}"


def test_item_that_is_not_a_mapping(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: a\n  question: q\n- just a question?\n")
    assert load_error(path).message == f"{path}:3: case #2: expected a mapping of fields, found str"


def test_file_that_is_not_a_list(tmp_path):
    path = write(tmp_path / "c.yaml", "id: a\nquestion: q\n")
    assert load_error(path).message == f"{path}: expected a list of cases, found dict"


def test_invalid_yaml_names_the_line(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: a\n  question: [unclosed\n- id: b\n")
    assert load_error(path).message == f"{path}:3: invalid YAML: expected ',' or ']', but got ':'"


def test_invalid_json_line(tmp_path):
    path = write(tmp_path / "c.jsonl", '{"id": "a", "question": "q"}\n{"id": "b", question: "q"}\n')
    assert load_error(path).message == f"{path}:2: invalid JSON: Expecting property name enclosed in double quotes"


# --- duplicate questions -------------------------------------------------------------------------


def test_duplicate_questions_after_normalisation_are_warned_about(tmp_path):
    path = write(
        tmp_path / "c.yaml",
        "- id: a\n  question: How do I get a refund?\n"
        "- id: b\n  question: 退款怎么办？\n"
        "- id: c\n  question: '  how do i GET a refund '\n"
        "- id: d\n  question: 退款 怎么办?\n"
        "- id: e\n  question: How do I get a receipt?\n",
    )
    case_set = load_cases([path])
    assert [c.id for c in case_set.cases] == ["a", "b", "c", "d", "e"]
    hint = "after normalisation; run `ragjudge dedupe` to drop it"
    assert case_set.warnings == (
        f"case 'c' ({path}:5) duplicates the question of case 'a' {hint}",
        f"case 'd' ({path}:7) duplicates the question of case 'b' {hint}",
    )


def test_duplicate_questions_across_files(tmp_path):
    one = write(tmp_path / "one.yaml", "- id: a\n  question: Where is my parcel?\n")
    two = jsonl(tmp_path / "two.jsonl", {"id": "b", "question": "where is my parcel"})
    assert load_cases([one, two]).warnings == (
        f"case 'b' ({two}:1) duplicates the question of case 'a' after normalisation; run `ragjudge dedupe` to drop it",
    )


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Refund?", "refund"),
        ("Re fund", "refund"),
        ("退款\u3000怎么办", "退款怎么办"),
        ("退款\t怎么办\n", "退款怎么办"),
        ("退款？！。，、；：", "退款"),
        ("refund?!.,;:", "refund"),
        ("发票（电子）", "发票电子"),
    ],
)
def test_normalisation_equates(a, b):
    assert normalize_question(a) == normalize_question(b)


@pytest.mark.parametrize(("a", "b"), [("退款", "退货"), ("refund 1", "refund 2"), ("a-b", "ab c")])
def test_normalisation_keeps_different_questions_apart(a, b):
    assert normalize_question(a) != normalize_question(b)


def test_normalised_form():
    assert normalize_question("  How, do I？ Get  a Refund!! ") == "howdoigetarefund"


# --- through the CLI -----------------------------------------------------------------------------


BAD_FILES = {
    "not_utf8": (b"- id: a\n  question: caf\xe9\n", "bad.yaml", "{p}:2: not UTF-8 (invalid byte at offset 23)"),
    "empty": (b"[]\n", "bad.yaml", "{p}: the case set is empty"),
    "duplicate_id": (
        b"- id: a\n  question: q1\n- id: a\n  question: q2\n",
        "bad.yaml",
        "{p}:3: case 'a': duplicate id (first used at {p}:1)",
    ),
    "no_question": (b"- id: a\n  expected: x\n", "bad.yaml", "{p}:1: case 'a': question: required field is missing"),
    "unknown_field": (
        b'{"id": "a", "question": "q", "colour": "red"}\n',
        "bad.jsonl",
        "{p}:1: case 'a': unknown field 'colour'",
    ),
}


@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_cli_exits_2_for_bad_case_files_without_a_traceback(tmp_path, capsys, kind, closed_url):
    data, name, message = BAD_FILES[kind]
    path = tmp_path / name
    path.write_bytes(data)
    code = main(["run", "--endpoint", closed_url, "--cases", str(path)])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.splitlines()[0] == "ragjudge: error: " + message.format(p=path)
    assert err.splitlines()[1].startswith("Tip: ")
    assert "Traceback" not in err
    assert out == ""


def test_cli_case_file_from_the_config_resolves_next_to_it(tmp_path, capsys, closed_url):
    conf = tmp_path / "conf"
    (conf / "cases").mkdir(parents=True)
    (conf / "cases" / "anchors.yaml").write_text("- id: a\n  question: q\n  colour: red\n", encoding="utf-8")
    write(conf / "ragjudge.yml", f"endpoint:\n  url: {closed_url}\ncases: [cases/anchors.yaml]\n")
    code = main(["run", "--config", str(conf / "ragjudge.yml")])
    _, err = capsys.readouterr()
    assert code == 2
    assert (
        err.splitlines()[0]
        == f"ragjudge: error: {conf.resolve() / 'cases' / 'anchors.yaml'}:1: case 'a': unknown field 'colour'"
    )


@pytest.fixture
def closed_url() -> str:
    # Never called: bad case files are reported before the endpoint is.
    return "http://127.0.0.1:9/ask"


def test_a_category_that_looks_out_of_scope_but_is_not_recognised_is_a_warning(tmp_path):
    path = write(
        tmp_path / "c.yaml",
        "- {id: a, question: q1, category: outofscope}\n"
        "- {id: b, question: q2, category: 超纲题}\n"
        "- {id: c, question: q3, category: out-scope, should_answer: false}\n"
        "- {id: d, question: q4, category: refunds}\n",
    )
    loaded = load_cases([path])
    assert [c.should_answer for c in loaded.cases] == [True, True, False, True]
    assert loaded.warnings == (
        f"case 'a' ({path}:1): category 'outofscope' looks like out-of-scope but is not a recognised spelling, "
        "so the case is expected to be answered; write out_of_scope (or set should_answer: false)",
        f"case 'b' ({path}:2): category '超纲题' looks like out-of-scope but is not a recognised spelling, "
        "so the case is expected to be answered; write out_of_scope (or set should_answer: false)",
    )


def test_yaml_1_2_booleans_keep_yes_no_and_on_as_text(tmp_path):
    path = write(
        tmp_path / "c.yaml",
        "- id: a\n  question: Yes\n  expected: No\n  category: on\n  tags: [off, y, n]\n  should_answer: true\n"
        "- id: b\n  question: Is it free?\n  should_answer: False\n",
    )
    first, second = load_cases([path]).cases
    assert (first.question, first.expected, first.category, first.tags) == ("Yes", "No", "on", ("off", "y", "n"))
    assert (first.should_answer, second.should_answer) == (True, False)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("deep.yaml", "- id: a\n  question: " + "[" * 2000 + "]" * 2000 + "\n"),
        ("deep.jsonl", '{"id": "a", "question": ' + "[" * 2000 + "]" * 2000 + "}\n"),
    ],
)
def test_a_case_file_nested_thousands_of_levels_deep_is_a_case_file_error(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CaseFileError) as refused:
        load_cases([path])
    assert refused.value.message == f"{path}: nested too deeply to read (lists or mappings hundreds of levels deep)"
    assert refused.value.exit_code == 2


@pytest.mark.parametrize(
    ("line", "message", "tip"),
    [
        (
            "  golden_context_ids: doc-1\n",
            "golden_context_ids: a list is expected, not a single text",
            'write it as a list, even of one: golden_context_ids: ["doc-1"]',
        ),
        (
            "  must_mention: refund\n",
            "must_mention: a list is expected, not a single text",
            'write it as a list, even of one: must_mention: ["refund"]',
        ),
        (
            "  mustNotMention: 退款\n",
            "mustNotMention: a list is expected, not a single text",
            'write it as a list, even of one: mustNotMention: ["退款"]',
        ),
    ],
)
def test_a_text_where_a_list_belongs_names_the_fix(tmp_path: Path, line: str, message: str, tip: str) -> None:
    path = write(tmp_path / "c.yaml", "- id: a\n  question: q\n" + line)
    error = load_error(path)
    assert (error.message, error.tip) == (f"{path}:1: case 'a': {message}", tip)


def test_a_text_where_a_list_belongs_in_jsonl_names_the_fix(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "c.jsonl", {"id": "a", "question": "q", "golden_context_ids": "doc-1"})
    error = load_error(path)
    assert error.message == f"{path}:1: case 'a': golden_context_ids: a list is expected, not a single text"
    assert error.tip == 'write it as a list, even of one: golden_context_ids: ["doc-1"]'


@pytest.mark.parametrize("lines", [1, 3])
def test_json_lines_in_a_yaml_file_says_to_rename_it(tmp_path: Path, lines: int) -> None:
    items = [{"id": f"c{i}", "question": f"q{i}?"} for i in range(lines)]
    path = write(tmp_path / "cases.yaml", "".join(json.dumps(i) + "\n\n" for i in items))
    error = load_error(path)
    assert error.message == f"{path}: JSON Lines content (one JSON object per line) in a file named .yaml"
    assert error.tip == (
        "rename it to cases.jsonl: a case file is read as JSONL by its name (.jsonl, .ndjson), as a YAML list otherwise"
    )


def test_one_case_not_written_as_a_list_item_names_the_fix(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "id: a\nquestion: q\n")
    error = load_error(path)
    assert (error.message, error.tip) == (
        f"{path}: expected a list of cases, found dict",
        "start each case with `- ` (a YAML list item), or list them under `cases:`",
    )
