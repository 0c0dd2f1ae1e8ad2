"""`ragjudge calibrate`: is the judge fit to gate? Agreement with human labels, and bias checks.

Exit 0 fit, 1 unfit (a bar missed, or a bias found), 2 bad usage or input, 3 nothing could be
scored. A `--labels` run writes the calibration record that `ragjudge run` checks.
"""

from __future__ import annotations

import argparse
import json
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ragjudge import masking
from ragjudge.calibrate.fingerprint import (
    add_pairwise,
    fingerprint_of,
    kept_pairwise,
    new_record,
    record_path,
    write_record,
)
from ragjudge.calibrate.items import load_bias_items
from ragjudge.calibrate.judging import ScoredLabel, faithfulness_rule, require_openai, score_labels
from ragjudge.calibrate.labels import Label, check_given_scores, check_label_criteria, is_binary, load_labels
from ragjudge.calibrate.pairing import criteria_agreement, criterion_lines, reference_agreement, reference_lines
from ragjudge.calibrate.verdict import (
    Bar,
    BarResult,
    check_applicable,
    check_labelled,
    evaluate,
    meaning,
    parse_fail_under,
    scoped_results,
    unreachable,
)
from ragjudge.config.loader import load_config
from ragjudge.config.model import Config
from ragjudge.errors import ConfigError, EvaluationError, ExitCode, RagjudgeError, UsageError
from ragjudge.gate.eventlog import EventLog
from ragjudge.interrupt import interrupted
from ragjudge.judge.bias import MAX_FLIP_RATE, BiasResult, length_bias, position_bias
from ragjudge.judge.factory import make_judge
from ragjudge.judge.interface import Judge, host_of
from ragjudge.metrics.names import FAITHFULNESS
from ragjudge.outpaths import check_output_paths
from ragjudge.rules import Rule
from ragjudge.stats.agreement import AgreementReport, compare
from ragjudge.transport import deadline

if TYPE_CHECKING:
    from ragjudge.judge.evidence import EvidenceScorer

REPORT_KEYS = (
    "n",
    "agreement",
    "ci95",
    "kappa",
    "tpr",
    "tnr",
    "confusion",
    "mae",
    "mean_error",
    "weighted_kappa",
    "spearman",
    "weighted_f1",
    "criteria",
    "reference",
)


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text} must lie strictly between 0 and 1")
    return value


def add_parser(sub: Any) -> None:
    p = sub.add_parser("calibrate", help="measure the judge against human labels, and check it for bias")
    p.add_argument("--labels", type=Path, metavar="FILE", help='human labels, JSONL: {"id", "human", "judge"}')
    p.add_argument("--config", type=Path, help="config file (default: ./ragjudge.yml if present)")
    p.add_argument(
        "--min-agreement",
        type=_rate,
        metavar="P",
        help="the Wilson 95%% lower bound of agreement must reach P (default 0.8, unless --fail-under is given)",
    )
    p.add_argument(
        "--fail-under",
        action="extend",
        nargs="+",
        default=[],
        metavar="METRIC=VALUE",
        help="also require METRIC >= VALUE (agreement, kappa, tpr, tnr, weighted_kappa, spearman, weighted_f1; "
        "criteria.NAME.METRIC; reference.agreement, reference.kappa, reference.VERDICT.agreement)",
    )
    p.add_argument("--report", type=Path, metavar="FILE", help="write the JSON report here")
    p.add_argument("--position-bias", type=Path, metavar="ITEMS", help='JSONL {"id", "claim", "passages": [...]}')
    p.add_argument("--length-bias", type=Path, metavar="ITEMS", help="JSONL items as for --position-bias")
    p.add_argument(
        "--max-flip-rate", type=_rate, default=MAX_FLIP_RATE, metavar="P", help="position bias bar (default 0.10)"
    )
    p.add_argument(
        "--max-rise-rate", type=_rate, default=MAX_FLIP_RATE, metavar="P", help="length bias bar (default 0.10)"
    )
    p.add_argument(
        "--pairwise",
        type=Path,
        metavar="FILE",
        help='people\'s preferences, JSONL {"id", "question", "answer_a", "answer_b", "preferred": "A"|"B"|"tie"}: '
        "the pairwise judge's agreement with them and its position consistency",
    )
    p.add_argument("--log", type=Path, metavar="FILE", help="JSONL log of every judge call")
    p.set_defaults(handler=handle)


class _Judges:
    """The configured judge and the evidence judge, made once, on first use."""

    def __init__(self, config: Config) -> None:
        self.config = config

    @cache  # noqa: B019 - one instance per command run
    def judge(self) -> Judge:
        # The instrument the gate uses: with endpoint.refusal.judge its rubric call also asks about declining.
        return make_judge(self.config.judge, classify_refusal=self.config.endpoint.refusal.judge)

    @cache  # noqa: B019
    def evidence(self) -> EvidenceScorer:
        require_openai(self.config, "scoring claims (ordinal labels, bias checks)")
        from ragjudge.judge.evidence import EvidenceScorer  # imports the SDK: only for the model judge

        return EvidenceScorer(self.config.judge, caller=getattr(self.judge(), "caller", None))


def handle(args: argparse.Namespace) -> int:
    if not (args.labels or args.position_bias or args.length_bias or args.pairwise):
        raise UsageError(
            "nothing to calibrate",
            tip="pass --labels FILE, and/or --position-bias ITEMS, --length-bias ITEMS or --pairwise FILE",
        )
    bars = parse_fail_under(args.fail_under)
    if args.pairwise is None and any(b.scope == "pairwise" for b in bars):
        raise UsageError("--fail-under pairwise.*: needs --pairwise FILE (people's preferences between two answers)")
    config = load_config(args.config)
    fingerprint = fingerprint_of(config.judge, config.endpoint.refusal.judge)
    judges = _Judges(config)
    report: dict[str, Any] = dict.fromkeys(REPORT_KEYS)
    reasons: list[str] = []
    fit = True
    check_output_paths((("--report", args.report), ("--log", args.log)))
    log = EventLog(args.log)
    try:
        if args.labels:
            agreement, results, extra = _agreement(args, config, judges, bars, log)
            report.update(agreement)
            report.update(extra)
            fit = all(r.passed for r in results)
            reasons.extend(r.reason for r in results if not r.passed)
        if args.pairwise:
            from ragjudge.calibrate.preferences import calibrate_pairwise  # the pairwise judge imports the SDK

            results = calibrate_pairwise(args.pairwise, config, bars, partial(log.write, "judge", "pairwise"), report)
            fit = fit and all(r.passed for r in results)
            reasons.extend(r.reason for r in results if not r.passed)
        for kind, path, bar in (
            ("position", args.position_bias, args.max_flip_rate),
            ("length", args.length_bias, args.max_rise_rate),
        ):
            if path is None:
                continue
            bias = _bias(kind, path, bar, judges, config, log)
            report[f"{kind}_bias"] = bias.as_dict()
            print(bias.summary())
            if bias.biased:
                fit = False
                reasons.append(bias.summary())
    except RagjudgeError:
        if not deadline.stopped():  # when stopped, the calls the stop cut off made it fail, not the labels
            raise
    finally:
        log.close()
    if deadline.stopped():
        # Labels the stop left unjudged would make a verdict of part of the set: no record, no report.
        raise interrupted("the calibration was done")
    verdict: Literal["fit", "unfit"] = "fit" if fit else "unfit"
    judge_desc = _judge_desc(config)
    report.update(verdict=verdict, judge_fingerprint=fingerprint.digest, judge=judge_desc, reasons=reasons)
    path = record_path(config.judge)
    if args.labels:
        record = new_record(
            fingerprint,
            verdict,
            n=report["n"],
            agreement=report["agreement"],
            ci95=report["ci95"],
            labels=str(args.labels),
            reasons=reasons or [r["reason"] for r in report.get("bars", [])],
            pairwise=kept_pairwise(report.get("pairwise")),
        )
        write_record(record, path)
        report["record"] = str(path)
    elif args.pairwise:
        # People's preferences alone add to the record of this very judge; they do not make one.
        why_not = add_pairwise(path, fingerprint, report["pairwise"])
        report["record"] = str(path) if why_not is None else None
        print(f"record not updated: {why_not}" if why_not else f"pairwise figures added to {path}")
    if args.report:
        try:
            args.report.parent.mkdir(parents=True, exist_ok=True)
            text = masking.mask(json.dumps(report, indent=2, ensure_ascii=False))
            args.report.write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{args.report}: cannot write the report ({exc.strerror})") from None
    where = f"; record written to {report['record']}" if "record" in report else ""
    print(f"verdict: {verdict} (judge {judge_desc['model']}, fingerprint {fingerprint.digest[:12]}{where})")
    return int(ExitCode.PASSED if fit else ExitCode.GATE_FAILED)


def _judge_desc(config: Config) -> dict[str, Any]:
    if config.judge.provider == "offline":
        return {"provider": "offline", "model": "offline-lexical"}
    return {
        "provider": config.judge.provider,
        "model": config.judge.model,
        "base_url_host": host_of(config.judge.base_url),
        "temperature": config.judge.temperature,
    }


def _agreement(
    args: argparse.Namespace, config: Config, judges: _Judges, bars: list[Bar], log: EventLog
) -> tuple[dict[str, Any], list[BarResult], dict[str, Any]]:
    labels = load_labels(args.labels)
    binary = is_binary(labels)
    check_applicable(bars, binary)
    check_given_scores(labels, binary)
    _check_criteria_and_points(labels, config, bars, args.labels)
    rule = faithfulness_rule(config)
    scored = score_labels(
        labels,
        binary,
        rule,
        judges.judge,
        judges.evidence,
        lambda label_id, fields: log.write("judge", label_id, {**fields, "purpose": "calibrate"}),
        config.judge.concurrency,
    )
    usable = [s for s in scored if s.judge is not None]
    unscored = [s for s in scored if s.judge is None]
    for s in unscored:
        print(f"unscored: {s.label.id} ({s.label.where}): {s.unscored}")
    if not usable:
        raise EvaluationError(
            f"{args.labels}: no label could be scored by the judge ({len(unscored)} unscored)",
            tip="see the reasons above, and --log FILE for the judge's replies",
        )
    agreement = compare([s.label.human for s in usable], [float(s.judge or 0.0) for s in usable], binary)
    results = evaluate(agreement, args.min_agreement, bars)
    print(agreement.summary())
    for line in meaning(agreement, results, args.min_agreement):
        print(line)
    _print_details(agreement)
    scoped, figures = _criteria_and_points(scored, bars)
    results = results + scoped
    extra = _extra(agreement, results, scored, binary, args.labels, rule)
    return _as_dict(agreement), results, {**extra, **figures}


def _check_criteria_and_points(labels: list[Label], config: Config, bars: list[Bar], path: Path) -> None:
    """Criteria scores and point verdicts the configured judge can be asked, and bars on what is labelled."""
    check_label_criteria(labels, config.judge.criteria)
    names = {name for label in labels for name in label.criteria}
    points = any(label.reference_points for label in labels)
    if names and config.judge.provider != "openai":
        raise ConfigError(
            f"{path}: criteria labels need the model judge: the offline judge cannot score criteria (the config "
            f"has judge.provider: {config.judge.provider!r})",
            tip="point --config at a ragjudge.yml with judge.provider: openai",
        )
    if points and not config.judge.reference:
        raise ConfigError(
            f"{path}: reference_points labels need judge.reference: true; with false the reference reaches no judge",
            tip="calibrate with the judge.reference the gate uses; the fingerprint records it",
        )
    check_labelled(bars, names, points, path)


def _criteria_and_points(scored: list[ScoredLabel], bars: list[Bar]) -> tuple[list[BarResult], dict[str, Any]]:
    """Print the agreement on each labelled criterion and on the reference's points; their bars and figures."""
    criteria = criteria_agreement(scored)
    points = reference_agreement(scored)
    by_name, on_points = scoped_results(criteria, points, bars)
    for name, c in criteria.items():
        for line in criterion_lines(c):
            print(line)
        for r in by_name[name]:
            print(f"  {'✓' if r.passed else '✗'} {r.reason}")
    if points is not None:
        for line in reference_lines(points):
            print(line)
        for r in on_points:
            print(f"  {'✓' if r.passed else '✗'} {r.reason}")
    results = [r for name in criteria for r in by_name[name]] + on_points
    figures = {
        "criteria": {name: c.as_dict() for name, c in criteria.items()} if criteria else None,
        "reference": points.as_dict() if points is not None else None,
    }
    return results, figures


def _print_details(a: AgreementReport) -> None:
    def f(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.3f}"

    if a.binary and a.confusion is not None:
        c = a.confusion
        print(
            f"kappa={f(a.kappa)} tpr={f(a.tpr)} tnr={f(a.tnr)} "
            f"confusion: tp={c['tp']} fp={c['fp']} tn={c['tn']} fn={c['fn']} (positive = human 1)"
        )
    else:
        print(
            f"mae={f(a.mae)} mean_error={f(a.mean_error)} kappa={f(a.kappa)} weighted_kappa={f(a.weighted_kappa)} "
            f"spearman={f(a.spearman)} weighted_f1={f(a.weighted_f1)}"
        )


def _as_dict(a: AgreementReport) -> dict[str, Any]:
    return {
        "n": a.n,
        "agreement": a.agreement,
        "ci95": list(a.ci95),
        "kappa": a.kappa,
        "tpr": a.tpr,
        "tnr": a.tnr,
        "confusion": a.confusion,
        "mae": a.mae,
        "mean_error": a.mean_error,
        "weighted_kappa": a.weighted_kappa,
        "spearman": a.spearman,
        "weighted_f1": a.weighted_f1,
    }


def _extra(
    a: AgreementReport,
    results: list[BarResult],
    scored: list[ScoredLabel],
    binary: bool,
    labels_path: Path,
    rule: Rule,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "scale": "binary" if binary else "ordinal",
        "bars": [r.as_dict() for r in results],
        "labels_file": str(labels_path),
        "judged": sum(1 for s in scored if s.source != "label" or s.judgement is not None),
        "unscored": [
            {"id": s.label.id, "where": s.label.where, "reason": s.unscored} for s in scored if s.judge is None
        ],
    }
    bar = next((r for r in results if r.metric == "agreement_ci95_lower"), None)
    if bar is not None:
        out["min_agreement"] = bar.threshold
        short = unreachable(a.n, bar.threshold)
        out["labels_needed"] = short[1] if short else None
    if binary and any(s.source == FAITHFULNESS for s in scored):
        out["faithfulness_rule"] = f"{rule.metric} {rule.op} {rule.threshold:g}"
    return out


def _bias(kind: str, path: Path, bar: float, judges: _Judges, config: Config, log: EventLog) -> BiasResult:
    items = load_bias_items(path)
    scorer = judges.evidence()

    def write(item_id: str, fields: dict[str, Any]) -> None:
        log.write("judge", item_id, fields)

    run = position_bias if kind == "position" else length_bias
    return run(items, scorer, write, bar, config.judge.concurrency)
