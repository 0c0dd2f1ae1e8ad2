"""The `Case` value (`cases.case`): every field of a case file, and what the endpoint template sees of it."""

from __future__ import annotations

from ragjudge.cases.case import Case
from ragjudge.cases.caseset import load_cases
from tests.cases.casefiles import write

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
        file=str(path),
        line=1,
    )
    assert second.id == "cs-030"
    assert (second.origin, second.file, second.line) == (f"{path}:13", str(path), 13)
    assert second.should_answer is False
    assert (second.golden_context_ids, second.must_mention, second.tags) == ((), (), ())
    assert case_set.warnings == ()


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
