"""`ragjudge serve`: canary analyses over HTTP for Flagger, Argo Rollouts and Prometheus.

Runs until SIGTERM (or Ctrl-C), then stops within 2 s: analyses still running are marked
`error: interrupted` in the log. Exit 0 after a stop, 2 for bad usage or config.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

DEFAULT_PORT = 8787


def add_parser(sub: Any) -> None:
    p = sub.add_parser("serve", help="run canary analyses over HTTP (Flagger webhooks, Argo Rollouts, /metrics)")
    p.add_argument("--config", type=Path, help="config file (default: ./ragjudge.yml if present)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0 in a pod)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument(
        "--token-env",
        metavar="VAR",
        help="require `Authorization: Bearer <$VAR>` on every endpoint but /healthz and /metrics",
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    import os
    import signal
    import sys
    import threading

    from ragjudge.canary.thresholds import DISLIKE_RATE_RATIO, parse_canary_rules
    from ragjudge.config.canary_config import CanaryConfig
    from ragjudge.config.loader import load_config
    from ragjudge.errors import ConfigError, UsageError
    from ragjudge.serve.analyses import Registry
    from ragjudge.serve.server import ServeServer, json_log, serve_until_stopped

    config = load_config(args.config)
    token: str | None = None
    if args.token_env is not None:
        token = os.environ.get(args.token_env) or None
        if token is None:
            raise UsageError(
                f"--token-env {args.token_env}: the variable is not set or empty",
                tip=f"export {args.token_env}=<token> (in Kubernetes, from a Secret), or leave out --token-env",
            )
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: a port is 0 to 65535")

    # The config's mistakes are found at start, not at the first webhook.
    canary = config.canary or CanaryConfig()
    rules = parse_canary_rules(canary.rules)
    needs_arms = any(rule.metric != DISLIKE_RATE_RATIO for rule in rules)
    if needs_arms and canary.sample is None:
        raise ConfigError(
            "canary.sample is not set",
            tip="set canary.sample to the fixed canary question sample (a case file) that serve asks both arms",
        )
    if needs_arms and canary.sample is not None and not canary.sample.exists():
        raise ConfigError(f"canary.sample: {canary.sample} not found", tip="mount the sample beside the config")

    registry = Registry(config, needs_arms=needs_arms, log=json_log)
    try:
        server = ServeServer((args.host, args.port), registry, token)
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
            tip="pick another --port, or stop what is using it",
        ) from None

    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    print(f"ragjudge serve: listening on {server.url}", flush=True)
    json_log(
        {
            "event": "listening",
            "url": server.url,
            "token": "required" if token else "off",
            "max_concurrent": config.serve.max_concurrent,
            "reanalyse_s": config.serve.reanalyse_s,
        }
    )
    interrupted = serve_until_stopped(server, stop)
    json_log({"event": "stopped", "interrupted": interrupted})
    if registry.alive_threads():
        # An analysis thread may be waiting on an endpoint for up to endpoint.timeout_s; the sample's
        # worker pool is joined at interpreter exit, which would break the 2 s promise. The log is
        # flushed; nothing else is left to save.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0
