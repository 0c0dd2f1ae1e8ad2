"""The gate's walk: endpoint -> judge -> scoring -> suite -> report, without entering `calibrate/`.

`calibrate/` is the `ragjudge calibrate` command's room. The gate takes one module from it: the
check of the calibration record and the judge's credentials (`calibrate.fingerprint`); these tests keep it
so, in a fresh interpreter (the test process itself has imported everything by now).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = ["ragjudge.calibrate", "ragjudge.calibrate.fingerprint"]


def _calibrate_modules(script: str, cwd: Path) -> list[str]:
    """Run `script` in a fresh interpreter; the `ragjudge.calibrate*` modules it imported, sorted."""
    listing = "sorted(m for m in sys.modules if m.startswith('ragjudge.calibrate'))"
    probe = f"{script}\nimport json, sys\nprint(json.dumps({listing}))\n"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=cwd,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def test_importing_the_gate_imports_only_the_calibration_record_check(tmp_path: Path) -> None:
    assert (
        _calibrate_modules("import ragjudge.gate.evaluation, ragjudge.commands.run, ragjudge.gate.bias_probe", tmp_path)
        == ALLOWED
    )


def test_a_model_judged_run_with_precision_and_bias_check_stays_out_of_calibrate(tmp_path: Path) -> None:
    # The widest walk the gate has, as users start it: `ragjudge run` with the model judge, LLM context
    # precision and --bias-check.
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from tests.fakes.openai_server import FakeOpenAI
        from tests.fakes.rag import RagServer, answer
        from tests.judge.fake_evidence import KEY, evidence_responder, other_judges, passage, run_config
        from ragjudge.cli import main

        folder = Path({str(tmp_path)!r})
        texts = {{f"d{{i}}": passage(m, "refunds", i) for i, m in enumerate(["[S5]", "", "[S1]"])}}
        replies = {{"Q?": answer("Refunds take 5 days.", list(texts), texts)}}
        with FakeOpenAI(evidence_responder(other=other_judges), api_key=KEY) as fake, RagServer(replies) as rag:
            config = run_config(folder, fake.base_url, rag.url, [{{"id": "c", "question": "Q?"}}],
                                {{"context_precision": ">= 0.0"}}, calibration=str(folder / "cal.json"))
            code = main(["run", "--config", str(config), "--report", str(folder / "r.json"), "--bias-check", "1"])
        assert code == 0, code
        assert fake.call_count == 3, fake.call_count  # rubric and claims in one call, evidence in order, reversed
        """
    )
    assert _calibrate_modules(script, ROOT) == ALLOWED
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["suite"]["position_bias"]["items"] == 1
    assert report["cases"][0]["metrics"]["context_precision"] is not None
