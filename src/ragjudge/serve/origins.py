"""Where a caller may send the service, and where the configured credentials may go.

A caller (Argo's start metric, a Flagger webhook's metadata) may name the arms' URLs and a feedback
URL. Unchecked, anyone holding the serve token (which Canary objects carry in the clear) could make
the pod call any host, with `endpoint.headers` and `canary.feedback.headers` attached. So:

- a caller-named URL's host must match `serve.allowed_hosts` (unset: the hosts of the configured
  `canary.treatment`, `canary.control` and feedback URLs, filled in for that canary), else the request
  is refused before anything is sent;
- the configured headers go only to the origin (scheme, host, port) they were configured for:
  `endpoint.headers` to the configured arm URLs' (and `endpoint.url`'s) origins, `canary.feedback.headers`
  to `canary.feedback.url`'s. A caller-named URL elsewhere is called without them.

A caller-named URL is data. The host checked must be the host called, so the URL checked is the URL sent:
it is never rendered as a template (`CanaryRequest.literal_arms`; rendered, `http://127.0.0.1:{#/#}@evil/`
passed as host 127.0.0.1 and was sent as `http://127.0.0.1:@evil/`, and a nested `{%for%}` spun a core),
and it is refused when it holds template syntax or anything HTTP clients read differently
(`urls.ambiguity`), so the host `urls.host` reads is the one urllib3 connects to.
"""

from __future__ import annotations

from ragjudge.config.canary_config import CanaryConfig
from ragjudge.config.model import Config
from ragjudge.errors import ConfigError
from ragjudge.serve.state import AnalysisSpec
from ragjudge.transport import urls

KEY = "serve.allowed_hosts"
TEMPLATE_SYNTAX = ("{{", "{%", "{#")
"""Jinja's delimiters: a caller's URL holding one was written to be rendered, and never is."""
CONFIGURED = {"treatment": "canary.treatment", "control": "canary.control", "feedback_url": "canary.feedback.url"}


def fill(template: str | None, spec: AnalysisSpec) -> str | None:
    """`{name}`/`{namespace}` filled in; plain replacement, not str.format: a URL may hold other braces."""
    if not template:
        return None
    return template.replace("{name}", spec.name).replace("{namespace}", spec.namespace)


def _configured_feedback_url(canary: CanaryConfig, spec: AnalysisSpec) -> str | None:
    feedback = canary.feedback
    if feedback is None:
        return None
    if feedback.url is not None:
        return fill(feedback.url, spec)
    return feedback.prometheus.url if feedback.prometheus is not None else None


def allowed_hosts(config: Config, spec: AnalysisSpec) -> tuple[str, ...]:
    """The host patterns a caller may name for this canary: exact hosts, or `*.suffix`."""
    if config.serve.allowed_hosts is not None:
        return tuple((fill(h, spec) or "").lower() for h in config.serve.allowed_hosts)
    canary = config.canary or CanaryConfig()
    configured = (fill(canary.treatment, spec), fill(canary.control, spec), _configured_feedback_url(canary, spec))
    return tuple(h for h in (urls.host(u) for u in configured if u) if h)


def host_allowed(host: str, patterns: tuple[str, ...]) -> bool:
    for pattern in patterns:
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]) and len(host) > len(pattern) - 1:
                return True
        elif host == pattern:
            return True
    return False


def check_named_urls(config: Config, spec: AnalysisSpec) -> None:
    """Raises ConfigError (HTTP 400) for a caller-named URL this service may not call; nothing is sent."""
    patterns = allowed_hosts(config, spec)
    for field, url in (("treatment", spec.treatment), ("control", spec.control), ("feedback_url", spec.feedback_url)):
        if url is None:
            continue
        if any(mark in url for mark in TEMPLATE_SYNTAX):
            raise ConfigError(
                f"the {field} URL holds template syntax ({{{{, {{% or {{#): a URL a caller names is sent as "
                "written, never rendered",
                tip=f"send the URL itself; one that varies per canary belongs in {CONFIGURED[field]} in the config "
                "(it may use {name} and {namespace})",
            )
        problem = urls.ambiguity(url)
        if problem is not None:
            raise ConfigError(
                f"the {field} URL may not carry {problem}: HTTP clients disagree on which host it names",
                tip="send a plain http(s)://host[:port]/path URL",
            )
        host = urls.host(url)
        if not host_allowed(host, patterns):
            raise ConfigError(
                f"the {field} URL's host {host!r} is not in {KEY}",
                tip=f"add it to {KEY} in the config (unset, {KEY} holds the hosts of canary.treatment, "
                "canary.control and the feedback URL)",
            )


def endpoint_origins(config: Config, spec: AnalysisSpec) -> tuple[str, ...]:
    """The URLs whose origins `endpoint.headers` were configured for."""
    canary = config.canary or CanaryConfig()
    found = [fill(canary.treatment, spec), fill(canary.control, spec)]
    if config.endpoint.url and "{{" not in config.endpoint.url:
        found.append(config.endpoint.url)
    return tuple(u for u in found if u)


def keeps_headers(url: str, configured: tuple[str, ...]) -> bool:
    return any(urls.same_origin(url, origin) for origin in configured)
