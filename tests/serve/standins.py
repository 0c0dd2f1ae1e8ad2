"""Stand-ins for the two callers: Flagger (replaying a Canary's webhooks the way its scheduler
calls them) and Argo Rollouts' web metric provider (evaluating an AnalysisTemplate's conditions).

Both are driven by the example manifests in examples/deploy/, read as written; only cluster URLs
are mapped to loopback (`resolve`) and `${VAR}` in a Canary is filled in from `env`, as Flux's
post-build substitution would.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import requests

_VAR = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)\}")


@dataclass(frozen=True)
class Call:
    hook: str
    status: int
    text: str


@dataclass
class FlaggerRun:
    outcome: str
    """`promoted`, `rolled back` or `timed out`."""
    calls: list[Call] = field(default_factory=list)
    failed_checks: int = 0

    def of(self, hook: str) -> list[Call]:
        return [c for c in self.calls if c.hook == hook]


class StandInFlagger:
    """Flagger's canary loop, cut down to its webhooks: pre-rollout once it succeeds (a failure counts
    toward `threshold`), then per interval: rollback hooks (a 2xx rolls back), rollout hooks (a non-2xx
    counts toward `threshold`, which rolls back), the weight steps up to `maxWeight`, and then
    confirm-promotion hooks until one answers 2xx (promoted)."""

    def __init__(self, canary: dict[str, Any], resolve: Callable[[str], str], env: dict[str, str]) -> None:
        self.canary = copy.deepcopy(canary)
        self.name = canary["metadata"]["name"]
        self.namespace = canary["metadata"].get("namespace", "default")
        analysis = canary["spec"]["analysis"]
        self.threshold = int(analysis["threshold"])
        self.max_weight = int(analysis.get("maxWeight", 50))
        self.step_weight = int(analysis.get("stepWeight", 10))
        self.hooks: list[dict[str, Any]] = []
        for hook in analysis.get("webhooks", []):
            metadata = {k: _VAR.sub(lambda m: env[m.group(1)], v) for k, v in (hook.get("metadata") or {}).items()}
            self.hooks.append({**hook, "url": resolve(hook["url"]), "metadata": metadata})

    def call(self, hook_type: str, checksum: str, phase: str = "Progressing") -> list[Call]:
        calls = []
        for hook in self.hooks:
            if hook.get("type", "rollout") != hook_type:
                continue
            payload = {
                "name": self.name,
                "namespace": self.namespace,
                "phase": phase,
                "checksum": checksum,
                "metadata": hook["metadata"],
            }
            timeout = float(hook.get("timeout", "10s").removesuffix("s"))
            reply = requests.post(hook["url"], json=payload, timeout=timeout)
            calls.append(Call(hook_type, reply.status_code, reply.text))
        return calls

    def run(self, checksum: str, interval_s: float = 0.2, within_s: float = 120.0) -> FlaggerRun:
        """Until promoted or rolled back, or `within_s` (Flagger's progressDeadlineSeconds, in effect)."""
        run = FlaggerRun("timed out")
        weight = 0
        pre_rollout_done = False
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            rollback = self.call("rollback", checksum)
            run.calls += rollback
            if any(200 <= c.status < 300 for c in rollback):
                run.outcome = "rolled back"
                return run
            if not pre_rollout_done:
                pre = self.call("pre-rollout", checksum, phase="Initialized")
                run.calls += pre
                if all(200 <= c.status < 300 for c in pre):
                    pre_rollout_done = True
                else:
                    run.failed_checks += 1
            else:
                rollout = self.call("rollout", checksum)
                run.calls += rollout
                if any(not 200 <= c.status < 300 for c in rollout):
                    run.failed_checks += 1
                elif weight < self.max_weight:
                    weight += self.step_weight
                else:
                    confirm = self.call("confirm-promotion", checksum, phase="Waiting")
                    run.calls += confirm
                    if all(200 <= c.status < 300 for c in confirm):
                        run.outcome = "promoted"
                        return run
            if run.failed_checks >= self.threshold:
                run.outcome = "rolled back"
                return run
            time.sleep(interval_s)
        return run


# --------------------------------------------------------------------------- Argo Rollouts

_CONDITION = re.compile(r'^result\.(\w+) (==|!=) "([^"]*)"$')
_ARG = re.compile(r"\{\{\s*args\.([\w-]+)\s*\}\}")


def evaluate(condition: str, result: dict[str, Any]) -> bool:
    """The one expression form our AnalysisTemplate uses: `result.FIELD == "VALUE"` (or `!=`)."""
    match = _CONDITION.match(condition)
    if match is None:
        raise AssertionError(f"the stand-in cannot evaluate {condition!r}")
    name, op, value = match.groups()
    equal = result.get(name) == value
    return equal if op == "==" else not equal


def measure(metric: dict[str, Any], result: dict[str, Any]) -> str:
    """Argo's rule: Successful if successCondition holds, Failed if failureCondition holds, Inconclusive
    when both are given and neither holds (with only a success condition, not success is Failed)."""
    success, failure = metric.get("successCondition"), metric.get("failureCondition")
    if success and evaluate(success, result):
        return "Successful"
    if failure and evaluate(failure, result):
        return "Failed"
    if success and failure:
        return "Inconclusive"
    return "Failed"


class StandInArgo:
    """Argo's web metric provider for one AnalysisTemplate: args filled in, the request sent, the
    JSON result measured against the template's conditions."""

    def __init__(self, template: dict[str, Any], args: dict[str, str], resolve: Callable[[str], str]) -> None:
        self.metrics = {m["name"]: m for m in template["spec"]["metrics"]}
        self.args = args
        self.resolve = resolve
        declared = {a["name"] for a in template["spec"].get("args", [])}
        assert set(args) == declared, f"args given {sorted(args)} != declared {sorted(declared)}"

    def _fill(self, value: Any) -> Any:
        if isinstance(value, str):
            return _ARG.sub(lambda m: self.args[m.group(1)], value)
        if isinstance(value, dict):
            return {k: self._fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._fill(v) for v in value]
        return value

    def fetch(self, metric_name: str) -> tuple[int, dict[str, Any]]:
        web = self._fill(self.metrics[metric_name]["provider"]["web"])
        headers = {h["key"]: h["value"] for h in web.get("headers", [])}
        body = web.get("jsonBody")
        if body is not None:  # URLs inside the body are the cluster's too
            body = {k: self.resolve(v) if isinstance(v, str) else v for k, v in body.items()}
        reply = requests.request(
            web.get("method", "GET"),
            self.resolve(web["url"]),
            json=body,
            headers=headers,
            timeout=web.get("timeoutSeconds", 10),
        )
        assert web.get("jsonPath", "{$}") == "{$}"
        return reply.status_code, reply.json()

    def measurement(self, metric_name: str) -> tuple[str, dict[str, Any]]:
        status, result = self.fetch(metric_name)
        if not 200 <= status < 300:
            return "Error", result
        return measure(self.metrics[metric_name], result), result
