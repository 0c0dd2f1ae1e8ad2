"""The judge settings given on the command line (`--judge-model`, `--judge-base-url`, `--judge-api-key-env`),
laid over the config's: `run` and `canary` take the same flags, as the GitHub Action's judge-* inputs."""

from __future__ import annotations

import os
from typing import Any

from pydantic import SecretStr

from ragjudge import masking
from ragjudge.config.model import Config
from ragjudge.errors import UsageError
from ragjudge.transport import urls


def with_judge_overrides(config: Config, model: str | None, base_url: str | None, key_env: str | None) -> Config:
    """The config with the judge settings given on the command line (the GitHub Action's judge-* inputs)."""
    update: dict[str, Any] = {}
    if model:
        update["model"] = model
    if base_url:
        try:
            update["base_url"] = urls.check_http_url(base_url)
        except ValueError as exc:
            raise UsageError(f"--judge-base-url: {exc}") from None
    if key_env:
        key = os.environ.get(key_env, "")
        if not key:
            raise UsageError(f"--judge-api-key-env {key_env}: the variable is not set or empty")
        masking.register(key)
        update["api_key"] = SecretStr(key)
    elif config.judge.api_key is None and os.environ.get("OPENAI_API_KEY"):
        masking.register(os.environ["OPENAI_API_KEY"])
        update["api_key"] = SecretStr(os.environ["OPENAI_API_KEY"])
    if not update:
        return config
    return config.model_copy(update={"judge": config.judge.model_copy(update=update)})
