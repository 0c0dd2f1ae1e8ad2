"""A canary sample with conversations: each arm is asked every turn in order, with its own earlier answers,
and each turn is one observation."""

from __future__ import annotations

from pathlib import Path

from ragjudge.canary.sample import run_sample
from ragjudge.cases.caseset import load_cases
from ragjudge.config.endpoint_config import EndpointConfig
from ragjudge.endpoint.client import EndpointClient
from tests.fakes.responder_server import Exchange, ResponderServer


def test_each_arm_carries_its_own_answers_into_the_next_turn(tmp_path: Path) -> None:
    cases_file = tmp_path / "c.yaml"
    cases_file.write_text(
        "- id: chat\n  turns:\n    - question: 我想退货\n    - question: 那运费谁出？\n"
        "- id: one\n  question: 发票呢？\n",
        encoding="utf-8",
    )
    cases = load_cases([cases_file]).cases
    seen: dict[str, list[list[str]]] = {"treatment": [], "control": []}

    def arm(name: str):  # type: ignore[no-untyped-def]
        def answer(ex: Exchange) -> None:
            messages = ex.request.json()["messages"]
            seen[name].append([m["content"] for m in messages])
            ex.json({"answer": f"{name} answer {len(messages)}", "retrieved": []})

        return answer

    config = EndpointConfig.model_validate(
        {"body": '{"messages": {{ messages | tojson }}}', "retries": 0, "timeout_s": 5}
    )
    with ResponderServer(arm("treatment")) as treatment, ResponderServer(arm("control")) as control:
        clients = {
            "treatment": EndpointClient(config, treatment.url),
            "control": EndpointClient(config, control.url),
        }
        runs = run_sample(cases, clients, None, 2, 1)
    for name in ("treatment", "control"):
        assert [o.case_id for o in runs[name].observations] == ["chat turn 1", "chat turn 2", "one"]
        assert all(o.error is None for o in runs[name].observations)
        assert sorted(seen[name]) == sorted(
            [["我想退货"], ["我想退货", f"{name} answer 1", "那运费谁出？"], ["发票呢？"]]
        )


def test_a_reply_without_passages_is_observed_as_such(tmp_path: Path) -> None:
    cases_file = tmp_path / "c.yaml"
    cases_file.write_text("- id: one\n  question: 发票呢？\n", encoding="utf-8")
    cases = load_cases([cases_file]).cases
    config = EndpointConfig.model_validate(
        {"preset": "openai-chat", "model": "m", "body": '{"messages": {{ messages | tojson }}}', "retries": 0}
    )
    reply = {"object": "chat.completion", "choices": [{"index": 0, "message": {"content": "三个工作日内。"}}]}
    with ResponderServer(lambda ex: ex.json(reply)) as treatment, ResponderServer(lambda ex: ex.json(reply)) as control:
        clients = {"treatment": EndpointClient(config, treatment.url), "control": EndpointClient(config, control.url)}
        runs = run_sample(cases, clients, None, 2, 1)
    assert [o.passages_unknown for o in runs["treatment"].observations] == [True]
    assert runs["treatment"].passages_unknown == 1


def test_an_arm_whose_answers_outgrow_the_request_limit_errors_that_turn_and_the_sample_goes_on(
    tmp_path: Path,
) -> None:
    cases_file = tmp_path / "c.yaml"
    cases_file.write_text(
        "- id: chat\n  turns:\n    - question: a?\n    - question: b?\n    - question: c?\n- id: one\n  question: d?\n",
        encoding="utf-8",
    )
    cases = load_cases([cases_file]).cases
    asked: dict[str, list[int]] = {"treatment": [], "control": []}

    def arm(name: str, answer_chars: int):  # type: ignore[no-untyped-def]
        def answer(ex: Exchange) -> None:
            asked[name].append(len(ex.request.json()["messages"]))
            ex.json({"answer": "x" * answer_chars, "retrieved": []})

        return answer

    # Turn 2 carries one 600-character answer and fits in 1,000 bytes; turn 3 carries two and does not.
    config = EndpointConfig.model_validate(
        {"body": '{"messages": {{ messages | tojson }}}', "retries": 0, "timeout_s": 5, "max_request_bytes": 1000}
    )
    with ResponderServer(arm("treatment", 600)) as treatment, ResponderServer(arm("control", 10)) as control:
        clients = {
            "treatment": EndpointClient(config, treatment.url),
            "control": EndpointClient(config, control.url),
        }
        runs = run_sample(cases, clients, None, 2, 1)
    outgrown = (
        "endpoint error: not sent: endpoint.body renders over 1,000 bytes with the conversation's 2 earlier answers "
        "(endpoint.max_request_bytes: 1,000)"
    )
    assert [(o.case_id, o.error) for o in runs["treatment"].observations] == [
        ("chat turn 1", None),
        ("chat turn 2", None),
        ("chat turn 3", outgrown),
        ("one", None),
    ]
    assert [(o.case_id, o.error) for o in runs["control"].observations] == [
        ("chat turn 1", None),
        ("chat turn 2", None),
        ("chat turn 3", None),
        ("one", None),
    ]
    assert sorted(asked["treatment"]) == [1, 1, 3]  # turn 3 was never sent
    assert sorted(asked["control"]) == [1, 1, 3, 5]
