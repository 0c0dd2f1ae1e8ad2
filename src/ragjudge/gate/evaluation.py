"""`ragjudge run` as a function: config and overrides in, report out."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragjudge.calibrate.fingerprint import calibration_gate, judge_trust
from ragjudge.cases.case import Case
from ragjudge.cases.caseset import CaseSet, load_cases
from ragjudge.compare import Baseline, baseline_for, compare_with_baseline, regression_rules
from ragjudge.compare.pairwise_summary import with_pairs
from ragjudge.config.judge_config import JudgeConfig
from ragjudge.config.loader import register_secrets
from ragjudge.config.model import Config
from ragjudge.endpoint.client import EndpointClient
from ragjudge.endpoint.coverage import mapping_warnings, unknown_passages_warning
from ragjudge.endpoint.result import EndpointResult
from ragjudge.endpoint.wiring import history_warning, no_end_warning, undeclared_protocol_warning
from ragjudge.errors import ConfigError
from ragjudge.gate.advisory import advisory
from ragjudge.gate.bias_probe import BiasCheck
from ragjudge.gate.eventlog import EventLog
from ragjudge.gate.judge_runs import trust_flips
from ragjudge.gate.main_vote import main_votes
from ragjudge.gate.misread import passage_answers_as_errors
from ragjudge.gate.pipeline import ReplySource, RunPlan
from ragjudge.gate.provenance import case_set_hash, provenance
from ragjudge.gate.recorded import latency_rules, load_traces
from ragjudge.gate.rejudge import Evidence, eligible, flip_rate, rejudge
from ragjudge.gate.repeat import run_repeated
from ragjudge.gate.reporting import build_report
from ragjudge.gate.reproduce import probe_options
from ragjudge.gate.scoring import CaseResult
from ragjudge.gate.shard import Shard
from ragjudge.gate.spending import budget_kept, run_budget, with_costs
from ragjudge.gate.suite import evaluate_suite
from ragjudge.gate.tool_checks import unknown_tools_warning
from ragjudge.gate.votes import sampled_for_consistency
from ragjudge.judge import budget
from ragjudge.judge.criteria import check_case_criteria, every_name, undefined
from ragjudge.judge.factory import make_judge
from ragjudge.judge.interface import Judge, host_of
from ragjudge.metrics.names import PAIRWISE_LOSS_RATE, PAIRWISE_WORSE
from ragjudge.report.headline import with_headline
from ragjudge.report.model import Report, ShardBlock, mark_interrupted
from ragjudge.report.provenance_block import JudgeInfoBlock, JudgeTrustBlock, ProvenanceBlock
from ragjudge.report.suite_block import SuiteBlock
from ragjudge.report.writing import redact
from ragjudge.rules import Rule, criterion_of, parse_rules
from ragjudge.transport import deadline, urls

if TYPE_CHECKING:
    from ragjudge.judge.pairwise import PairVerdict
    from ragjudge.traces.session import TraceSession

MAX_PAIR_REASKS = 3
"""At most this many more pairwise rounds a changed answer, within `judge.rejudge`."""


@dataclass(frozen=True)
class GateRequest:
    config: Config
    endpoint: str | None = None
    cases: Sequence[Path] = ()
    log: Path | None = None
    log_bodies: bool = False
    traces: Path | None = None
    sample: int | None = None
    seed: int = 0
    bias_check: int = 0
    baseline: Path | None = None
    """Overrides baseline.report."""
    repeat: tuple[int, int] | None = None
    """(max, pass_at), overriding `repeat`."""
    shard: Shard | None = None
    """Evaluate only this part of the case set (`--shard i/n`)."""
    warm_up: Sequence[Callable[[], object]] = ()
    """Work for after the calls (compiling the comment template), done on a spare thread while they run."""


def endpoint_url(config: Config, override: str | None) -> str:
    """--endpoint, else endpoint.url; an --endpoint that is not http(s) with a host is bad input."""
    if override:
        try:
            return urls.check_http_url(override)
        except ValueError as exc:
            raise ConfigError(f"--endpoint: {exc}") from None
    if not config.endpoint.url:
        raise ConfigError(
            "no endpoint URL", tip="set endpoint.url in ragjudge.yml (e.g. ${RAG_URL}) or pass --endpoint URL"
        )
    return config.endpoint.url


def gate_rules(config: Config) -> tuple[list[Rule], list[Rule]]:
    """The case rules and the suite rules, parsed (a bad one is exit 2 naming its key)."""
    case_rules = parse_rules(config.case_rules(), "case", config.key("gate.case"))
    suite_rules = parse_rules(config.suite_rules(), "suite", config.key("gate.suite"))
    return case_rules, suite_rules


def case_set_of(config: Config, given: Sequence[Path]) -> CaseSet:
    """The cases a run reads: the files named on the command line, else the config's (relative to its folder)."""
    from_config = not given
    paths = config.cases if from_config else list(given)
    return load_cases(paths, config.max_case_file_bytes, config.folder if from_config else None)


def check_criteria(cases: Sequence[Case], config: Config, rules: Sequence[Rule]) -> None:
    """Exit 2 before any call for a criterion a case or a rule names but nothing defines."""
    check_case_criteria(cases, config.judge.criteria)
    known = every_name(cases, config.judge.criteria)
    for rule in rules:
        name = criterion_of(rule.metric, rule.scope)
        if name is not None and name not in known:
            raise ConfigError(
                config.key(f"gate.{rule.scope}.{rule.metric}") + f": {undefined(name, config.judge.criteria)}",
                tip="define it under judge.criteria, or inline in a case's criteria",
            )


def not_evaluated(cases: Sequence[Case], reason: str) -> list[CaseResult]:
    """Every case as an error with the reason the gate refused to evaluate: nothing was called."""
    empty = EndpointResult(None, reason, 0, 0.0, 0.0, None)
    return [CaseResult(case, "error", (reason,), {}, empty, None) for case in cases]


def run_gate(request: GateRequest) -> Report:
    config = request.config
    case_rules, suite_rules = gate_rules(config)
    regression_rules(config)  # bad regression rules are exit 2 before any call
    warnings: list[str] = []
    baseline = _baseline(request, warnings)
    source: ReplySource
    url: str | None = None
    tracing: TraceSession | None = None
    if request.traces is not None:
        need_latency = latency_rules([r.metric for r in (*case_rules, *suite_rules)])
        cases, source = load_traces(request.traces, config.endpoint, need_latency, request.sample, request.seed)
        warnings.append(
            f"judged recorded traces from {request.traces}: latency figures are the recorded ones, "
            "not measured by ragjudge"
        )
    else:
        url = endpoint_url(config, request.endpoint)
        case_set = case_set_of(config, request.cases)
        cases = list(case_set.cases)
        warnings.extend(case_set.warnings)
        unheard = history_warning(cases, config.endpoint)
        if unheard is not None:
            warnings.append(unheard)
        endless = no_end_warning(config.endpoint)
        if endless is not None:
            warnings.append(endless)
        if config.traces is not None:  # exit 2 before any call without the extra (the port: when it is bound)
            from ragjudge.traces.session import TraceSession  # only with `traces:`: a run starts as fast without

            tracing = TraceSession(config.traces, config.key("traces"), config.endpoint.concurrency)
        source = EndpointClient(config.endpoint, url, log_bodies=request.log_bodies, tracing=tracing)
    check_criteria(cases, config, (*case_rules, *suite_rules, *regression_rules(config)))
    rejected = [c.id for c in cases if c.review == "rejected"]
    if rejected:
        cases = [c for c in cases if c.review != "rejected"]
        shown = ", ".join(rejected[:10]) + (f" and {len(rejected) - 10} more" if len(rejected) > 10 else "")
        warnings.append(f"{len(rejected)} case(s) rejected in review were skipped: {shown}")
    pending = sum(not c.gates for c in cases)
    if pending:
        warnings.append(
            f"{pending} case(s) pending review ran and are reported, but no rule counts them (review: pending; "
            "approve them with `ragjudge cases review`)"
        )
    all_cases = cases  # provenance hashes the whole set, so every shard (and their merge) names the same one
    shard_block = None
    if request.shard is not None:
        positions = request.shard.positions([c.id for c in cases])
        shard_block = ShardBlock(
            index=request.shard.index, count=request.shard.count, total_cases=len(cases), positions=positions
        )
        cases = [cases[k] for k in positions]
        warnings.append(
            f"shard {request.shard}: {len(cases)} of {shard_block.total_cases} cases; the verdict covers this "
            "shard only: `ragjudge merge` applies the rules to the whole set"
        )
    # What the gate takes from `calibrate/`: the check of the calibration record, and the judge's credentials.
    refusal = calibration_gate(config.judge, warnings, config.endpoint.refusal.judge, config.source)
    trust_fields = judge_trust(config.judge, config.endpoint.refusal.judge, config.source)
    judge = make_judge(config.judge, case_rules, classify_refusal=config.endpoint.refusal.judge)
    if config.endpoint.refusal.judge and judge.lexical:
        warnings.append(
            "endpoint.refusal.judge is on but the judge is the offline lexical one, which cannot classify "
            "declines: refusals were decided by the refused field, empty answers and phrases only; "
            "set judge.provider: openai to use it"
        )
    bias = BiasCheck.prepare(config.judge, judge, request.bias_check, request.seed, warnings)
    if judge.lexical and any(r.metric.startswith("judge.") for r in case_rules):
        warnings.append(
            "judge.* rules are not checked by the offline judge (it cannot assess rubric dimensions); "
            "set judge.provider: openai to apply them"
        )
    register_secrets(config)  # a config built in code was never loaded, so never registered
    # The case-set hash reads every case: worked out on the warm-up thread while the calls wait for replies.
    case_hash = functools.cache(lambda: case_set_hash(all_cases))
    warm_up: tuple[Callable[[], object], ...] = (*request.warm_up, case_hash)
    log = EventLog(request.log)
    pairs: dict[str, PairVerdict] | None = None
    spend = run_budget(config.judge, warnings)
    with budget.running(spend), _closing(log):
        plan = RunPlan(
            cases,
            case_rules,
            # With traces, threads beside those sending wait for their replies' spans (the client still sends
            # at most endpoint.concurrency requests at once).
            config.endpoint.concurrency + (tracing.waiting_threads if tracing is not None else 0),
            # The model judge's calls in flight are capped by its adaptive limit (judge.concurrency at most); the
            # extra workers wait out a 429's backoff without taking a place from the calls that can go.
            config.judge.concurrency * (2 if config.judge.provider == "openai" else 1),
            # The bias check re-reads sampled cases' passages; a rejudge judges a failing reply again; the pairwise
            # judge shows each answer beside its passages (and main's report keeps them for the next PR).
            keep_passage_text=request.bias_check > 0 or config.judge.rejudge > 0 or pairwise_on(config),
            warm_up=warm_up,
        )
        max_runs, pass_at = request.repeat or (config.repeat.max, config.repeat.pass_at)
        if refusal:
            results = not_evaluated(cases, refusal)
        else:
            with tracing if tracing is not None else contextlib.nullcontext():
                results = run_repeated(plan, source, judge, log, max_runs, pass_at)
        if baseline is not None and pairwise_on(config) and not deadline.stopped():
            from ragjudge.gate.pairs import judge_pairs  # the pairwise judge: only with a baseline
            from ragjudge.judge.pairwise import PairwiseJudge

            # Before the rejudge: a changed answer's pairwise orders are votes on whether it regressed.
            rounds = 1 + min(config.judge.rejudge, MAX_PAIR_REASKS)
            pairs = judge_pairs(
                results, baseline.report, PairwiseJudge(config.judge), log, config.judge.concurrency, rounds
            )
        if not refusal:
            evidence = _evidence(results, baseline, case_rules, config.judge, judge, pairs or {})
            results = rejudge(results, case_rules, judge, log, evidence, config.judge.concurrency)
            if _advisory_on(config, str(trust_fields.get("calibration"))):
                results, said = advisory(results, case_rules, str(trust_fields.get("calibration")))
                warnings.extend([said] if said else [])
        stopped = deadline.stop_reason()
        if bias is not None and not refusal and not stopped:
            bias.run(results, log, warnings)
    replies = [(t.case.id, t.endpoint.trace) for r in results for t in (r.turns or (r,))]
    warnings.extend(mapping_warnings(replies, config.endpoint.response))
    results = passage_answers_as_errors(results)
    warnings.extend(unknown_passages_warning([(cid, t) for cid, t in replies if t is None or t.spans is None]))
    warnings.extend(unknown_tools_warning([(t.case, t.endpoint.trace) for r in results for t in (r.turns or (r,))]))
    if tracing is not None:
        from ragjudge.traces.session import trace_warnings

        counts = tracing.counts()
        warnings.extend(trace_warnings([t for _, t in replies], tracing.config, tracing.address, counts))
    warnings.extend(undeclared_protocol_warning(replies))
    # Cases pending review ran and are reported; no rule counts them.
    gating = [r for r in results if r.case.gates]
    pending = len(results) - len(gating)
    suite = evaluate_suite(gating, case_rules, suite_rules, config.gate.max_error_rate, pending)
    judge_info = judge_summary(config, judge)
    if pairs is None and baseline is not None and _pairwise_rules(config):
        warnings.append(
            "the pairwise regression rules need the model judge (judge.provider: openai and judge.pairwise: true): "
            "no answer was compared pairwise, so they are not gated"
        )
    # Each result is let go as its record is built: a large run never holds every result and every record.
    flips = flip_rate(results)
    report = with_pairs(build_report(_handed_over(results), suite, judge_info, warnings), pairs or {})
    if flips is not None:
        # Beside the suite's figures, as the bias check's are: what the judge's own noise was in this run.
        report = report.model_copy(update={"suite": SuiteBlock.model_validate({**report.suite.model_dump(), **flips})})
    if bias is not None:
        report = bias.attach(report)
    if shard_block is not None:
        report = report.model_copy(update={"shard": shard_block})
    recorded = ProvenanceBlock.model_validate(
        {
            **provenance(config, all_cases, url, os.environ, case_hash()),
            "probe_options": probe_options(url, config.endpoint.url, os.environ),
        }
    )
    trust = JudgeTrustBlock.model_validate({**trust_fields, **trust_flips(flips)})
    report = report.model_copy(update={"provenance": recorded, "judge_trust": trust})
    if stopped:
        report = mark_interrupted(report, stopped, len(cases))
    elif baseline is not None and shard_block is not None:
        # A shard would list two thirds of the baseline as removed: the merge compares, over the whole set.
        report.warnings.append(
            f"shard {request.shard}: not compared with the baseline here; `ragjudge merge --baseline` compares the "
            "whole set"
        )
    elif baseline is not None:
        # Not for a stopped run: its unfinished cases would read as removed.
        report = compare_with_baseline(report, baseline.report, config, baseline_path=baseline.path)
    report = with_costs(report, config.judge)
    if spend is not None:
        report = budget_kept(report, spend, len(cases))
    if tracing is not None and tracing.config.export is not None:
        from ragjudge.traces.export import export_verdicts

        # Last: the verdicts sent are the report's own. A failed export is a warning, never the run's failure.
        report.warnings.extend(export_verdicts(report.cases, tracing.config.export.url))
    # An endpoint may echo a header back (a debug field, an error page): nothing downstream prints a secret.
    return redact(with_headline(report))


def _evidence(
    results: Sequence[CaseResult],
    baseline: Baseline | None,
    rules: Sequence[Rule],
    config: JudgeConfig,
    judge: Judge,
    pairs: Mapping[str, PairVerdict],
) -> Evidence:
    """What the votes draw on besides this run's judgements: main's outcomes and its votes on each reply it judged
    too (`gate.main_vote`), the pairwise verdicts, and the consistency sample."""
    eligible_ids = [r.case.id for r in results if eligible(r)]
    # `judge.rejudge: 0` asks the judge nothing twice; the offline judge says the same every time.
    size = 0 if judge.lexical or config.rejudge <= 0 else config.consistency_sample
    return Evidence(
        cap=config.rejudge,
        main=main_votes(results, baseline.report, rules, config) if baseline is not None else {},
        main_status={c.id: c.status for c in baseline.report.cases} if baseline is not None else {},
        pairs=pairs,
        sampled=sampled_for_consistency(eligible_ids, size, config.seed or 0),
    )


def _advisory_on(config: Config, calibration: str) -> bool:
    """`judge.uncalibrated: report` applies: a model judge without a fit calibration, not required to have one."""
    judge = config.judge
    return (
        judge.provider == "openai"
        and judge.uncalibrated == "report"
        and not judge.require_calibration
        and calibration in ("missing", "stale", "unfit")
    )


def pairwise_on(config: Config) -> bool:
    """Whether changed answers are judged pairwise against main's: the model judge, with `judge.pairwise`."""
    return config.judge.provider == "openai" and config.judge.pairwise


def _pairwise_rules(config: Config) -> bool:
    return any(r.metric in (PAIRWISE_LOSS_RATE, PAIRWISE_WORSE) for r in regression_rules(config))


def _handed_over(results: list[CaseResult]) -> Iterator[CaseResult]:
    """The results in order, each dropped from `results` as it is handed over (the list ends empty)."""
    results.reverse()
    while results:
        yield results.pop()


def _baseline(request: GateRequest, warnings: list[str]) -> Baseline | None:
    """The baseline report, read before any call (a bad one is exit 2); a missing one is a notice."""
    path = request.baseline or request.config.baseline.report
    return baseline_for(path, request.config.gate.regression is not None, warnings)


def judge_summary(config: Config, judge: Judge) -> JudgeInfoBlock:
    """The report's `judge_info`: the same keys whatever the judge (the offline one has no model and no host)."""
    model_judge = config.judge.provider == "openai"
    return JudgeInfoBlock(
        judge=judge.name,
        provider=config.judge.provider,
        lexical=judge.lexical,
        model=config.judge.model if model_judge else None,
        base_url_host=host_of(config.judge.base_url) if model_judge else None,
        combined=config.judge.combined if model_judge else False,
    )


@contextlib.contextmanager
def _closing(log: EventLog) -> Iterator[None]:
    try:
        yield
    finally:
        log.close()
