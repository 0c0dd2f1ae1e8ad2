"""Reading `ragjudge.yml` into a `Config`: safe YAML, `${VAR}` substitution, each validation error a line naming
its key (with a tip for a newcomer's mistake), relative paths resolved against the file's folder, secrets
registered for masking."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ragjudge import masking
from ragjudge.config import safeyaml
from ragjudge.config.envsubst import substitute
from ragjudge.config.mistakes import recognise
from ragjudge.config.model import Config
from ragjudge.config.protocol import UNION_TAGS
from ragjudge.config.templatepath import check_contained, workspace
from ragjudge.errors import ConfigError
from ragjudge.repofiles.bounded import Bound, read_bounded

_TOO_DEEP = "nested too deeply to read (lists or mappings hundreds of levels deep)"
_TOO_DEEP_TIP = "see docs/configuration.md: no key nests more than a few levels"

_UNQUOTED_FLOOR = re.compile(r"([\w.]+):\s*(>=?\s*[-+]?\.?\d[\d.]*(?:[eE][-+]?\d+)?)")


def format_validation_error(source: str, error: ValidationError) -> str:
    """One line per problem, naming the key path; never the offending value."""
    return explain_validation_error(source, error)[0]


def explain_validation_error(source: str, error: ValidationError) -> tuple[str, str | None]:
    """The lines of `format_validation_error`, and the tip of the first newcomer mistake among them."""
    lines = []
    tip = None
    for item in error.errors(include_url=False):
        loc = ".".join(str(p) for p in item["loc"] if p not in UNION_TAGS) or "(top level)"
        mistake = recognise(item["loc"], item["type"], item.get("input"), echo=False)
        if item["type"] == "extra_forbidden":
            lines.append(f"{source}: unknown key {loc!r}")
        elif mistake is not None:
            lines.append(f"{source}: {loc}: {mistake.problem}")
            tip = tip or mistake.tip
        else:
            lines.append(f"{source}: {loc}: {str(item['msg']).removeprefix('Value error, ')}")
    return "\n".join(lines), tip


def _resolve(base: Path, path: Path | None) -> Path | None:
    if path is None:
        return None
    path = path.expanduser()
    return path if path.is_absolute() else base / path


def _template(base_dir: Path, path: Path | None, source: str) -> Path | None:
    resolved = _resolve(base_dir, path)
    if resolved is None:
        return None
    # A pull request can edit ragjudge.yml: its template must stay inside the repository.
    return check_contained(resolved, [workspace(), base_dir], f"{source}: template")


def parse_config(data: Any, source: str, base_dir: Path) -> Config:
    """Validate an already-parsed YAML tree and resolve its relative paths."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping of keys, not {type(data).__name__}")
    data = substitute(data, source)
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        message, tip = explain_validation_error(source, exc)
        raise ConfigError(message, tip=tip or "see docs/configuration.md for every key") from None
    register_secrets(config)
    judge = config.judge.model_copy(
        update={
            "cache": _resolve(base_dir, config.judge.cache),
            "calibration": _resolve(base_dir, config.judge.calibration),
        }
    )
    canary = config.canary
    if canary is not None:
        feedback = canary.feedback
        if feedback is not None:
            feedback = feedback.model_copy(update={"file": _resolve(base_dir, feedback.file)})
        canary = canary.model_copy(update={"sample": _resolve(base_dir, canary.sample), "feedback": feedback})
    resolved = config.model_copy(
        update={
            "judge": judge,
            "cases": [p for p in (_resolve(base_dir, c) for c in config.cases) if p is not None],
            "template": _template(base_dir, config.template, source),
            "canary": canary,
            "baseline": config.baseline.model_copy(update={"report": _resolve(base_dir, config.baseline.report)}),
        }
    )
    resolved._source, resolved._folder = source, base_dir
    return resolved


def register_secrets(config: Config) -> None:
    """Header values (tokens) and the judge's key are secrets however they were written."""
    headers = list(config.endpoint.headers.values())
    feedback = config.canary.feedback if config.canary else None
    if feedback is not None:
        headers += feedback.headers.values()
        if feedback.prometheus is not None:
            headers += feedback.prometheus.headers.values()
    # A literal short value (`Accept: json`) is not a credential; masking it would garble outputs.
    masking.register(*(value for value in headers if len(value) >= 6))
    if config.judge.api_key is not None:
        masking.register(config.judge.api_key.get_secret_value())


MAX_CONFIG_BYTES = 1_000_000
"""A config file larger than this is refused (a real one is a few kilobytes)."""


def load_config(path: Path | None) -> Config:
    """Load `path`, or `ragjudge.yml` in the working directory, or the defaults.

    An explicitly named file must exist; the implicit one is optional.
    """
    explicit = path is not None
    target = path if path is not None else Path("ragjudge.yml")
    if not target.exists():
        if explicit:
            raise ConfigError(f"{target}: config file not found", tip="pass --config with an existing file")
        return parse_config({}, "(defaults)", Path.cwd())
    # A pull request can carry ragjudge.yml as a FIFO or a link to /dev/zero: read through the one bounded reader.
    bound = Bound(
        MAX_CONFIG_BYTES,
        f"over {MAX_CONFIG_BYTES:,} bytes, more than any config",
        tip="a config is a few kilobytes: check what the path names",
        missing="config file not found",
        missing_tip="pass --config with an existing file",
        error=ConfigError,
    )
    try:
        text = read_bounded(target, bound).decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{target}: not UTF-8 text", tip="save the config file as UTF-8") from None
    try:
        data = safeyaml.load(text).data
    except safeyaml.YamlLimitError as exc:
        if exc.too_deep:
            raise ConfigError(f"{target}: {_TOO_DEEP}", tip=_TOO_DEEP_TIP) from None
        where = f" (line {exc.line})" if exc.line else ""
        raise ConfigError(
            f"{target}: refused{where}: {exc.message}", tip=exc.tip or "write the config out plainly"
        ) from None
    except RecursionError:
        raise ConfigError(f"{target}: {_TOO_DEEP}", tip=_TOO_DEEP_TIP) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        tip = None
        line = text.splitlines()[mark.line] if mark is not None and mark.line < len(text.splitlines()) else ""
        rule = _UNQUOTED_FLOOR.search(line)
        if rule:
            # `pass_rate: >= 0.9` unquoted: YAML reads `>` as the start of a folded block.
            tip = f'quote a rule that starts with ">": {rule.group(1)}: "{rule.group(2).strip()}"'
        elif "{{" in text:
            # An unquoted `body: {"q": {{ question | tojson }}}` is a YAML mapping, and a broken one.
            tip = "quote values that hold a Jinja template: body: '{\"question\": {{ question | tojson }}}'"
        raise ConfigError(f"{target}: invalid YAML{where}: {problem}", tip=tip) from None
    try:
        return parse_config(data, str(target), target.resolve().parent)
    except RecursionError:
        raise ConfigError(f"{target}: {_TOO_DEEP}", tip=_TOO_DEEP_TIP) from None
