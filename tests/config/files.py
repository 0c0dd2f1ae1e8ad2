"""What the config tests share: writing a file, the ConfigError loading it raises, `run` through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragjudge.cli import main
from ragjudge.config.loader import load_config
from ragjudge.errors import ConfigError

SECRET = "sk-live-0123456789abcdef"
TOKEN = "tok-9f8e7d6c5b4a3210"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def config_error(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return info.value


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["run", *argv])
    out, err = capsys.readouterr()
    return code, out, err
