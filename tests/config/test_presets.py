"""`endpoint.preset` fills in what the team did not write, and leaves what it cannot read to the validation
that names it: a `response:` that is not a mapping is reported at `endpoint.response`, never merged into the
preset's mapping (a crash) or dropped for the preset's own (a silent replacement)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragjudge.cli import main
from ragjudge.config import presets


@pytest.mark.parametrize("preset", sorted(presets.PRESETS))
@pytest.mark.parametrize("response", ["choices.0.message.content", "[answer]", "7"])
def test_a_preset_with_a_response_that_is_not_a_mapping_is_exit_2_at_endpoint_response(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, preset: str, response: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragjudge.yml").write_text(
        f"endpoint:\n  url: http://127.0.0.1:9/ask\n  preset: {preset}\n  model: m\n  response: {response}\n",
        encoding="utf-8",
    )
    assert main(["run"]) == 2
    assert capsys.readouterr() == (
        "",
        "ragjudge: error: ragjudge.yml: endpoint.response: Input should be a valid dictionary or instance of "
        "ResponseMapping\nTip: see docs/configuration.md for every key\n",
    )


def test_apply_leaves_a_response_that_is_not_a_mapping_as_it_is() -> None:
    given = {"preset": "langserve", "response": "context"}
    assert presets.apply(given) is given
