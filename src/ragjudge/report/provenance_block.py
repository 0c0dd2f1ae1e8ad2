"""Where a report comes from and who judged it: the `provenance` and `judge_info` blocks.

Both are written with the keys they were given (`GivenKeysBlock`): reports written before provenance was
recorded have `{}`, and the offline judge's fingerprint has keys the model judge's has not.
"""

from __future__ import annotations

from ragjudge.report.block import GivenKeysBlock


class JudgeFingerprintBlock(GivenKeysBlock):
    """What decides the judge's scores: two reports whose fingerprints differ were judged differently, so their
    judge-based figures are shown against each other, never gated."""

    provider: str | None = None
    """`offline` or `openai` (`judge.provider`)."""
    model: str | None = None
    """The judge's model (`judge.model`); `offline-lexical` for the offline judge."""
    base_url_host: str | None = None
    """The host the model judge is called at (never the URL: it may hold a key); null for the offline judge."""
    prompt_hash: str | None = None
    """SHA-256 of the judge's prompt templates; null for the offline judge."""
    temperature: float | None = None
    """`judge.temperature`; null for the offline judge."""
    samples: int | None = None
    """`judge.samples`: judgements per answer, their median reported; 1 for the offline judge."""
    min_overlap: float | None = None
    """The offline judge's `judge.min_overlap`; absent for the model judge."""
    escalate_model: str | None = None
    """The model judge's `judge.escalate.model`, null without escalation; absent for the offline judge."""


class ProvenanceBlock(GivenKeysBlock):
    """Where the report comes from: enough to tell whether two reports can be compared (docs/regressions.md).
    Empty (`{}`) in reports written before it was recorded."""

    ragjudge_version: str | None = None
    """The ragjudge that ran the gate."""
    created_at: str | None = None
    """When the run started its report: ISO 8601 in UTC, to the second."""
    git_commit: str | None = None
    """The commit under test: `GITHUB_SHA`, else the checkout's HEAD; null outside a git checkout."""
    git_ref: str | None = None
    """The ref under test: `GITHUB_REF`, else the checkout's branch; null when detached or outside git."""
    case_set_hash: str | None = None
    """SHA-256 of the cases as they are asked and checked (not where they were read from), in id order."""
    rules_hash: str | None = None
    """SHA-256 of the case and suite rules."""
    judge_fingerprint: JudgeFingerprintBlock | None = None
    """What decides the judge's scores."""
    endpoint: str | None = None
    """The endpoint's URL without credentials, query or fragment; null when there was none (recorded traces)."""
    config: str | None = None
    """The config file the run read, as it was named (`--config`, else `ragjudge.yml`), or `(defaults)` when there
    was none: the comment's `ragjudge probe --config ...` line uses it. Null for a config built in code."""
    probe_options: list[str] | None = None
    """What `ragjudge probe` needs beside `--config` and the case to ask the service this run asked:
    `["--endpoint", URL]` when the run's URL was not the config's (`--endpoint`, the Action's `endpoint:` input),
    `["--endpoint", "$VAR"]` when that URL is a secret the variable `VAR` holds, `[]` when the config alone
    reaches it; null in reports written before it was recorded."""


class JudgeInfoBlock(GivenKeysBlock):
    """The judge, as the comment and the HTML report name it.

    `run` and `merge` write every key (the offline judge's `model` and `base_url_host` null, `combined` false);
    `canary` writes `judge`, `provider` and `lexical`, with `model` and `base_url_host` for the model judge, and
    `{}` when it judged nothing.
    """

    judge: str | None = None
    """The judge's name: `offline-lexical`, or the model's name."""
    provider: str | None = None
    """`offline` or `openai` (`judge.provider`)."""
    lexical: bool = False
    """True when the judge only compares words (the offline judge): the comment says so."""
    model: str | None = None
    """The model judge's model (`judge.model`); null for the offline judge."""
    base_url_host: str | None = None
    """The host the model judge is called at (the host only, never the URL); null for the offline judge."""
    combined: bool = False
    """Whether faithfulness and the rubric are judged in one call (`judge.combined`); false for the offline
    judge."""

    def name(self) -> str:
        """The judge's name as the comment shows it: `?` when the report names none."""
        return self.judge if self.judge is not None else "?"


class JudgeTrustBlock(GivenKeysBlock):
    """The judge's credentials: what it is and whether it was ever checked against people. The comment's footer
    shows it in one line."""

    model: str | None = None
    """The judge's model (`judge.model`), or `offline-lexical`."""
    prompt_fingerprint: str | None = None
    """The first 12 hex digits of the SHA-256 of the judge's prompt templates; null for the offline judge."""
    calibration: str | None = None
    """`ok` (a fit calibration of this very judge), `missing`, `stale` (the judge changed since), `unfit`, or
    `not applicable` (the offline judge compares words: there is nothing to calibrate)."""
    calibrated: bool = False
    """True only for `calibration: ok`."""
    stale: bool = False
    """True when a calibration record exists but the judge's fingerprint changed since it was made."""
    agreement: float | None = None
    """The calibration's agreement with people (0 to 1); null without a record."""
    agreement_interval: list[float] | None = None
    """Its 95% Wilson interval `[lo, hi]`; null without one."""
    labels: int | None = None
    """How many human labels the calibration was measured on; null without a record."""
    calibrated_at: str | None = None
    """When the calibration was made (ISO 8601); null without a record."""
    config: str | None = None
    """The config file the run read: the command to calibrate names it."""
    pairwise_agreement: float | None = None
    """The pairwise judge's agreement with people's preferences (`calibrate --pairwise`, 0 to 1); null when it was
    never measured for this judge."""
    pairwise_agreement_interval: list[float] | None = None
    """Its 95% Wilson interval `[lo, hi]`; null without one."""
    pairwise_labels: int | None = None
    """How many people's preferences it was measured on; null without a measure."""
    judge_flip_rate: float | None = None
    """This run's `suite.judge_flip_rate`: the share of the judge's verdicts that go against what it says most of
    the time, estimated from the random consistency sample (`judge.consistency_sample`); else null."""
    judge_flip_rate_interval: list[float] | None = None
    """Its 95% interval; null without an estimate."""
    judge_flip_sample: int | None = None
    """How many randomly sampled cases it was estimated on; null without an estimate."""
    position_consistency: float | None = None
    """This run's `comparison.pairwise.position_consistency` when answers were compared pairwise; else null."""
