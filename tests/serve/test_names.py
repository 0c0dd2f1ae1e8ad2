"""`serve.max_names`: the canary names remembered are bounded; the oldest finished goes first, a running one never."""

from __future__ import annotations

import time
from pathlib import Path

import requests

from ragjudge.canary.release import CanaryOutcome, CanaryRequest
from ragjudge.errors import ExitCode
from ragjudge.serve.analyses import Registry
from ragjudge.serve.state import AnalysisSpec
from tests.serve.service import Held, report, running_service, small_config


def instant(request: CanaryRequest) -> CanaryOutcome:
    return CanaryOutcome(report(), ExitCode.PASSED)


def wait_idle(registry: Registry) -> None:
    deadline = time.monotonic() + 30
    while registry.running():
        assert time.monotonic() < deadline, "analyses still running"
        time.sleep(0.01)


def test_the_1001st_name_forgets_the_oldest_finished_one(tmp_path: Path) -> None:
    config = small_config(tmp_path, max_concurrent=64)
    assert config.serve.max_names == 1000  # the default
    events: list[dict[str, object]] = []
    registry = Registry(config, runner=instant, log=events.append)
    for i in range(1000):
        registry.start(AnalysisSpec(f"c{i}", "prod"))
        if i % 50 == 49:
            wait_idle(registry)
    wait_idle(registry)
    # c0 finished first; asking c0 again makes it the newest, so c1 is now the oldest finished.
    registry.start(AnalysisSpec("c0", "prod"))
    wait_idle(registry)
    assert len(registry.names()) == 1000
    registry.start(AnalysisSpec("c1000", "prod"))
    wait_idle(registry)
    names = registry.names()
    assert len(names) == 1000
    assert "c1" not in names and {"c0", "c2", "c1000"} <= set(names)
    assert ("c1", "treatment") not in registry.requests_sent()
    assert {"event": "name_forgotten", "name": "c1", "max_names": 1000} in events


class HoldSome(Held):
    """Holds the analyses of names starting `hold-` until released; the others finish at once."""

    def runner(self, request: CanaryRequest) -> CanaryOutcome:
        if "//hold-" in (request.treatment or ""):
            return super().runner(request)
        return self.outcome


def test_a_running_name_is_never_dropped_and_with_all_running_a_new_name_is_503(tmp_path: Path) -> None:
    held = HoldSome()
    config = small_config(tmp_path, max_names=2, max_concurrent=3)
    try:
        with running_service(config, runner=held.runner) as svc:
            assert svc.post("/v1/analyses", {"name": "hold-a"}).status_code == 202  # the oldest, running
            assert svc.post("/v1/analyses", {"name": "b"}).status_code == 202
            svc.wait_done("b")
            assert svc.post("/v1/analyses", {"name": "c"}).status_code == 202
            assert svc.registry.names() == ["c", "hold-a"]  # b went, not the older running one
            svc.wait_done("c")
            assert svc.post("/v1/analyses", {"name": "hold-d"}).status_code == 202
            assert svc.registry.names() == ["hold-a", "hold-d"]
            full = svc.post("/v1/analyses", {"name": "e"})
            assert (full.status_code, full.json()) == (
                503,
                {
                    "error": "2 canary names are kept (serve.max_names) and each has an analysis running; "
                    "retry once one finishes"
                },
            )
            hook = svc.post("/flagger/pre-rollout", {"name": "e", "namespace": "prod", "checksum": "k"})
            assert (hook.status_code, hook.text) == (503, full.json()["error"])
            assert svc.registry.names() == ["hold-a", "hold-d"]
            metrics = requests.get(f"{svc.url}/metrics", timeout=5).text
            assert 'name="b"' not in metrics and 'name="c"' not in metrics
            held.release()
            svc.wait_done("hold-a")
            svc.wait_done("hold-d")
            assert svc.post("/v1/analyses", {"name": "e"}).status_code == 202
            assert len(svc.registry.names()) == 2
    finally:
        held.release()
