"""The whole `ragjudge.yml`: its top-level keys, each section a model of its own module.

`endpoint_config`, `judge_config`, `gate_config` (with `baseline:` and `repeat:`), `canary_config`,
`serve_config` and `traces_config` hold the sections, `section` what they all share; `loader` reads a file into a
`Config`.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, PrivateAttr

from ragjudge.config.canary_config import CanaryConfig
from ragjudge.config.endpoint_config import EndpointConfig
from ragjudge.config.gate_config import (
    DEFAULT_CASE_RULES,
    DEFAULT_SUITE_RULES,
    BaselineConfig,
    GateConfig,
    RepeatConfig,
)
from ragjudge.config.judge_config import JudgeConfig
from ragjudge.config.section import Section
from ragjudge.config.serve_config import ServeConfig
from ragjudge.config.traces_config import TracesConfig
from ragjudge.metrics.names import PASS_RATE

DEFAULT_MAX_CASE_FILE_BYTES = 50_000_000
"""50 MB: a larger case file is refused before it is parsed (`max_case_file_bytes` in ragjudge.yml)."""


class Config(Section):
    """The whole `ragjudge.yml`."""

    endpoint: EndpointConfig = Field(default_factory=EndpointConfig, description="The RAG endpoint under test.")
    judge: JudgeConfig = Field(default_factory=JudgeConfig, description="The judge; by default the offline one.")
    cases: list[Path] = Field(
        default_factory=list,
        description="Case files (YAML or JSONL), relative to the config file's folder; `--cases` overrides. "
        "Empty: `run` needs `--cases`.",
    )
    gate: GateConfig = Field(default_factory=GateConfig, description="The rules the gate applies.")
    template: Path | None = Field(
        None,
        description="A Jinja template for the comment, under the workspace or the config file's folder; "
        "`--template` overrides. Unset: the template shipped in the package.",
    )
    canary: CanaryConfig | None = Field(
        None, description="`ragjudge canary` and `ragjudge serve`; unset: their defaults."
    )
    max_case_file_bytes: int = Field(
        DEFAULT_MAX_CASE_FILE_BYTES, gt=0, description="A larger case file is refused before it is read."
    )
    baseline: BaselineConfig = Field(default_factory=BaselineConfig, description="Main's report to compare with.")
    repeat: RepeatConfig = Field(
        default_factory=RepeatConfig, description="Re-running failing cases; `--repeat MAX/PASS_AT` overrides."
    )
    serve: ServeConfig = Field(default_factory=ServeConfig, description="`ragjudge serve`'s limits.")
    traces: TracesConfig | None = Field(
        None,
        description="Join each case with the service's OpenTelemetry trace (`pip install 'ragjudge[traces]'`); "
        "unset: no trace context is sent and no spans are read.",
    )
    # Where it was read from: not keys of the file, so a file cannot set them.
    _source: str | None = PrivateAttr(None)
    _folder: Path | None = PrivateAttr(None)

    @property
    def source(self) -> str | None:
        """The config file it was read from (`(defaults)` when there was none); None when built in code."""
        return self._source

    @property
    def folder(self) -> Path | None:
        """The folder its relative paths (`cases:` ...) were resolved against; None when built in code."""
        return self._folder

    def key(self, path: str) -> str:
        """`ragjudge.yml: gate.case`: a key named with the file it is in, for messages raised after loading."""
        return f"{self._source}: {path}" if self._source else path

    def case_rules(self) -> dict[str, str]:
        return dict(DEFAULT_CASE_RULES if self.gate.case is None else self.gate.case)

    def suite_rules(self) -> dict[str, str]:
        rules = dict(DEFAULT_SUITE_RULES if self.gate.suite is None else self.gate.suite)
        # With no explicit tolerance, any failed or errored case fails the gate.
        rules.setdefault(PASS_RATE, ">= 1.0")
        return rules
