"""`ragjudge canary` as a function: config and overrides in, report and exit code out."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from ragjudge.canary.decision import decide
from ragjudge.canary.feedback import ARMS, Feedback, from_file, from_url
from ragjudge.canary.judge_spend import ran_out
from ragjudge.canary.prometheus import from_prometheus
from ragjudge.canary.report import CanaryReport, build_report, with_spend
from ragjudge.canary.sample import ArmRun, run_sample
from ragjudge.canary.thresholds import DISLIKE_RATE_RATIO, FAITHFULNESS, CanaryRule, parse_canary_rules
from ragjudge.canary.values import ArmEvidence, Evidence, Settings
from ragjudge.cases.caseset import load_cases
from ragjudge.config.canary_config import CanaryConfig, FeedbackConfig
from ragjudge.config.loader import register_secrets
from ragjudge.config.model import Config
from ragjudge.endpoint.client import EndpointClient
from ragjudge.errors import ConfigError, ExitCode
from ragjudge.gate.spending import counting_budget, known_cost
from ragjudge.interrupt import interrupted
from ragjudge.judge.budget import Budget
from ragjudge.judge.factory import make_judge
from ragjudge.judge.interface import host_of
from ragjudge.report.provenance_block import JudgeInfoBlock
from ragjudge.report.writing import redact
from ragjudge.transport import deadline

_EXIT = {"promote": ExitCode.PASSED, "rollback": ExitCode.GATE_FAILED, "inconclusive": ExitCode.INCONCLUSIVE}


@dataclass(frozen=True)
class CanaryRequest:
    """The config and the command line's overrides."""

    config: Config
    treatment: str | None = None
    control: str | None = None
    feedback: Path | None = None
    """`--feedback FILE`: replaces `canary.feedback`."""
    sample_size: int | None = None
    """Ask only the first N questions of `canary.sample` (`ragjudge serve`'s per-canary override)."""
    without_headers: frozenset[str] = frozenset()
    """Arms called without `endpoint.headers`: `ragjudge serve` names those whose URL a caller chose on
    another origin than the configured ones, so the credentials never follow a caller's URL."""
    literal_arms: frozenset[str] = frozenset()
    """Arms whose URL is sent exactly as written, never rendered as a template: `ragjudge serve` names those
    whose URL a caller chose (its host was checked on that text). `--treatment`/`--control` are the
    operator's, like `canary.treatment`, and stay templates."""


@dataclass(frozen=True)
class CanaryOutcome:
    report: CanaryReport
    exit_code: ExitCode


def load_feedback(config: FeedbackConfig | None, override_file: Path | None) -> Feedback | None:
    """The counts from `--feedback FILE`, else from `canary.feedback`; None when neither is given."""
    if override_file is not None:
        return from_file(override_file)
    if config is None:
        return None
    if config.file is not None:
        return from_file(config.file)
    if config.url is not None:
        return from_url(config.url, config.headers)
    if config.prometheus is not None:
        return from_prometheus(config.prometheus)
    return None


def _url(flag: str | None, configured: str | None, arm: str) -> str:
    url = flag or configured
    if not url:
        raise ConfigError(
            f"no {arm} URL", tip=f"set canary.{arm} in ragjudge.yml (e.g. ${{{arm.upper()}_URL}}) or pass --{arm} URL"
        )
    return url


def _warnings(runs: dict[str, ArmRun]) -> list[str]:
    warnings = []
    for arm in ARMS:
        run = runs[arm]
        if run.errors:
            warnings.append(
                f"{arm}: {len(run.errors)} of {len(run.observations)} requests failed ({run.errors[0]}); "
                "they are left out of its latencies and faithfulness"
            )
        if run.unscored:
            warnings.append(f"{arm}: the judge could not score {len(run.unscored)} answer(s) ({run.unscored[0]})")
    return warnings


def _run_arms(
    config: Config, canary: CanaryConfig, request: CanaryRequest, rules: tuple[CanaryRule, ...]
) -> tuple[dict[str, ArmRun], list[str], JudgeInfoBlock, Budget | None]:
    if canary.sample is None:
        raise ConfigError(
            "canary.sample is not set",
            tip="set canary.sample to the fixed canary question sample (a case file, e.g. cases/canary-200.yaml)",
        )
    urls = {
        "treatment": _url(request.treatment, canary.treatment, "treatment"),
        "control": _url(request.control, canary.control, "control"),
    }
    case_set = load_cases([canary.sample], config.max_case_file_bytes)
    cases = case_set.cases if request.sample_size is None else case_set.cases[: request.sample_size]
    bare = config.endpoint.model_copy(update={"headers": {}})
    clients = {
        arm: EndpointClient(
            bare if arm in request.without_headers else config.endpoint,
            urls[arm],
            literal_url=arm in request.literal_arms,
        )
        for arm in ARMS
    }
    judged = any(r.metric == FAITHFULNESS for r in rules)
    spent: list[str] = []
    spend = counting_budget(config.judge, spent) if judged else None
    judge = make_judge(config.judge, spend=spend) if judged else None
    runs = run_sample(cases, clients, judge, config.endpoint.concurrency, config.judge.concurrency)
    if deadline.stopped():
        # Calls cut off by the stop failed: latencies and faithfulness of part of the sample would decide.
        answered = sum(len(run.latencies) for run in runs.values())
        raise interrupted(f"the canary sample was done ({answered} of {2 * len(cases)} calls answered)")
    warnings = [*case_set.warnings, *spent, *_warnings(runs)]
    if request.sample_size is not None and request.sample_size > len(case_set.cases):
        warnings.append(
            f"sample_size {request.sample_size} asks more than the {len(case_set.cases)} questions in "
            f"{canary.sample.name}: all of them were asked"
        )
    if urls["treatment"] == urls["control"]:
        warnings.append("the treatment and control URLs are the same: this compares the service with itself")
    judge_info = JudgeInfoBlock()
    if judge is not None:
        judge_info = JudgeInfoBlock(judge=judge.name, provider=config.judge.provider, lexical=judge.lexical)
        if config.judge.provider == "openai":
            judge_info = judge_info.model_copy(
                update={"model": config.judge.model, "base_url_host": host_of(config.judge.base_url)}
            )
        if judge.lexical:
            warnings.append(
                "faithfulness was judged by the offline lexical judge (shared words, not meaning); "
                "set judge.provider: openai for a model judge"
            )
    return runs, warnings, judge_info, spend


def run_canary(request: CanaryRequest) -> CanaryOutcome:
    """Fetch the feedback, run the sample on both arms, decide, and build the report."""
    config = request.config
    canary = config.canary or CanaryConfig()
    rules = parse_canary_rules(canary.rules)
    settings = Settings.from_config(canary)

    feedback: Feedback | None = None
    if request.feedback is not None or any(r.metric == DISLIKE_RATE_RATIO for r in rules):
        # Feedback first: a bad source is found before any request is sent.
        feedback = load_feedback(canary.feedback, request.feedback)
        if feedback is None:
            raise ConfigError(
                "the dislike_rate_ratio rule needs production feedback counts, and none are configured",
                tip="set canary.feedback (file, url or prometheus), pass --feedback FILE, "
                "or remove canary.rules.dislike_rate_ratio",
            )

    runs: dict[str, ArmRun] | None = None
    warnings: list[str] = []
    judge_info = JudgeInfoBlock()
    spend: Budget | None = None
    if any(r.metric != DISLIKE_RATE_RATIO for r in rules):
        runs, warnings, judge_info, spend = _run_arms(config, canary, request, rules)

    arm_feedback = {arm: feedback.arm(arm) if feedback else None for arm in ARMS}
    evidence = Evidence(
        treatment=ArmEvidence(
            latencies=runs["treatment"].latencies if runs else (),
            ttfts=runs["treatment"].ttfts if runs else (),
            faithfulness=runs["treatment"].faithfulness if runs else (),
            passages_unknown=runs["treatment"].passages_unknown if runs else 0,
            feedback=arm_feedback["treatment"],
        ),
        control=ArmEvidence(
            latencies=runs["control"].latencies if runs else (),
            ttfts=runs["control"].ttfts if runs else (),
            faithfulness=runs["control"].faithfulness if runs else (),
            passages_unknown=runs["control"].passages_unknown if runs else 0,
            feedback=arm_feedback["control"],
        ),
        feedback_missing=feedback.missing if feedback else (),
    )
    decision = decide(evidence, rules, settings)

    # An arm that never answered: nothing to compare, unless a rule already failed on what there is.
    dead = [arm for arm in ARMS if runs is not None and not runs[arm].latencies]
    extra: list[str] = []
    exit_code = _EXIT[decision.verdict]
    if dead and runs is not None and decision.verdict != "rollback":
        exit_code = ExitCode.COULD_NOT_EVALUATE
        extra = [f"every request to the {arm} failed ({runs[arm].errors[0]})" for arm in dead]
    bugs = [(arm, o) for arm in ARMS if runs is not None for o in runs[arm].judge_bugs]
    if bugs and decision.verdict != "rollback":
        # As in the gate: a judge that failed inside ragjudge is a bug, and nothing is promoted past it.
        exit_code = ExitCode.COULD_NOT_EVALUATE
        decision = dataclasses.replace(decision, verdict="inconclusive")
        arm, first = bugs[0]
        answers = sum(len(runs[a].observations) for a in ARMS) if runs is not None else 0
        extra.append(
            f"the judge failed inside ragjudge on {len(bugs)} of {answers} answers: the canary cannot be promoted; "
            f"the first, {arm} case {first.case_id!r}: {first.judge_bug} (a bug in ragjudge, not in the service: "
            "rerun with RAGJUDGE_DEBUG=1 for a traceback, and report it)"
        )

    out_of_budget = ran_out(spend, runs) if spend is not None and runs is not None else None
    if out_of_budget is not None:
        # Part of the sample unjudged: what was judged cannot promote; a rule failed on it still rolls back (and
        # the budget is then the first warning, not a reason).
        if decision.verdict != "rollback":
            exit_code = ExitCode.COULD_NOT_EVALUATE
            decision = dataclasses.replace(decision, verdict="inconclusive")
            extra.insert(0, out_of_budget)
        else:
            warnings.insert(0, out_of_budget)
    cost = known_cost(spend, config.judge, warnings) if spend is not None else None

    report = build_report(
        decision,
        runs,
        arm_feedback,
        feedback.source if feedback else None,
        judge_info,
        warnings,
        extra,
        settings,
    )
    if spend is not None:
        report = with_spend(report, spend, cost)
    register_secrets(config)
    return CanaryOutcome(redact(report), exit_code)
