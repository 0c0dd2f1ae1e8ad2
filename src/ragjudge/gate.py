"""`ragjudge run` as a function: config and overrides in, report out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragjudge.calibrate.gatehooks import RunExtras
from ragjudge.cases import load_cases
from ragjudge.config import Config, register_secrets
from ragjudge.endpoint.client import EndpointClient
from ragjudge.errors import ConfigError, ExitCode
from ragjudge.eventlog import EventLog
from ragjudge.judge.factory import make_judge
from ragjudge.judge.interface import host_of
from ragjudge.report.model import Report, build_report, redact
from ragjudge.rules import parse_rules
from ragjudge.runner import ReplySource, RunPlan, run_cases
from ragjudge.suite import evaluate_suite
from ragjudge.traces import latency_rules, load_traces


@dataclass(frozen=True)
class GateRequest:
    config: Config
    endpoint: str | None = None
    cases: Sequence[Path] = ()
    log: Path | None = None
    traces: Path | None = None
    sample: int | None = None
    seed: int = 0
    bias_check: int = 0


def exit_code_for(verdict: str) -> ExitCode:
    return {"pass": ExitCode.PASSED, "fail": ExitCode.GATE_FAILED}.get(verdict, ExitCode.COULD_NOT_EVALUATE)


def run_gate(request: GateRequest) -> Report:
    config = request.config
    case_rules = parse_rules(config.case_rules(), "case", "gate.case")
    suite_rules = parse_rules(config.suite_rules(), "suite", "gate.suite")
    warnings: list[str] = []
    source: ReplySource
    if request.traces is not None:
        need_latency = latency_rules([r.metric for r in (*case_rules, *suite_rules)])
        cases, source = load_traces(
            request.traces, config.endpoint.response, need_latency, request.sample, request.seed
        )
        warnings.append(
            f"judged recorded traces from {request.traces}: latency figures are the recorded ones, "
            "not measured by ragjudge"
        )
    else:
        url = request.endpoint or config.endpoint.url
        if not url:
            raise ConfigError(
                "no endpoint URL", tip="set endpoint.url in ragjudge.yml (e.g. ${RAG_URL}) or pass --endpoint URL"
            )
        case_set = load_cases(list(request.cases) or config.cases, config.max_case_file_bytes)
        cases = list(case_set.cases)
        warnings.extend(case_set.warnings)
        source = EndpointClient(config.endpoint, url)
    judge = make_judge(config.judge, case_rules)
    extras = RunExtras.prepare(config, case_rules, judge, request.bias_check, request.seed, warnings)
    if judge.lexical and any(r.metric.startswith("judge.") for r in case_rules):
        warnings.append(
            "judge.* rules are not checked by the offline judge (it cannot assess rubric dimensions); "
            "set judge.provider: openai to apply them"
        )
    register_secrets(config)  # a config built in code was never loaded, so never registered
    log = EventLog(request.log)
    try:
        plan = RunPlan(cases, case_rules, config.endpoint.concurrency, config.judge.concurrency)
        results = extras.refused(cases) if extras.refusal else run_cases(plan, source, extras.judge, log)
        extras.check_bias(results, log, warnings)
    finally:
        log.close()
    suite = evaluate_suite(results, case_rules, suite_rules)
    judge_info = {
        "judge": judge.name,
        "provider": config.judge.provider,
        "lexical": judge.lexical,
    }
    if config.judge.provider == "openai":
        judge_info.update(model=config.judge.model, base_url_host=host_of(config.judge.base_url))
    # An endpoint may echo a header back (a debug field, an error page): nothing downstream prints a secret.
    return redact(extras.attach(build_report(results, suite, judge_info, warnings)))
