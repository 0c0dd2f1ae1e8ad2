"""The real Prometheus (Debian's package) on a free loopback port, scraping one target every second."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.fakes._http import free_port
from tests.fakes._process import stop_process

PROMETHEUS = shutil.which("prometheus")
SKIP_REASON = "the prometheus binary is not installed (apt-get install prometheus; CI installs it)"


@dataclass(frozen=True)
class RunningPrometheus:
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    """Prometheus's own output, for a test's failure message."""


@contextmanager
def prometheus_scraping(root: Path, target: str) -> Iterator[RunningPrometheus]:
    """Prometheus with its config, data and log under `root`, scraping `target` (host:port) as job `ragjudge`."""
    assert PROMETHEUS is not None, SKIP_REASON
    config = root / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n"
        f"scrape_configs:\n  - job_name: ragjudge\n    static_configs: [{{targets: ['{target}']}}]\n",
        encoding="utf-8",
    )
    port = free_port()
    log = root / "prometheus.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                PROMETHEUS,
                f"--config.file={config}",
                f"--storage.tsdb.path={root / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield RunningPrometheus(f"http://127.0.0.1:{port}", process, log)
    finally:
        stop_process(process, timeout_s=10)
