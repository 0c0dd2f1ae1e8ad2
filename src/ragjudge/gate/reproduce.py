"""What `ragjudge probe` needs, beside the config and the case, to ask the service this run asked.

The comment's `Reproduce:` line is only worth printing if, run in the same workspace, it reaches the same
service: a run whose URL came from `--endpoint` (the Action's `endpoint:` input, a PR's preview deployment)
asked a different service than the config names, and a line without that URL asks main's. A URL that is a secret
(masked: substituted from `${VAR}`, or carrying a user, password or query) is never printed: the line names the
variable that holds it instead, so the reader sets the same value.
"""

from __future__ import annotations

from collections.abc import Mapping

from ragjudge import masking
from ragjudge.transport.urls import public_url

_NOT_HOLDERS = ("GITHUB_", "RUNNER_", "ACTIONS_")
"""The runner's own variables: none of them is where a team keeps its endpoint."""


def holder(url: str, environ: Mapping[str, str]) -> str | None:
    """The environment variable whose value is exactly `url`: a team's own (`PREVIEW_URL`) before the Action's
    input (`INPUT_ENDPOINT`), alphabetically within each; None when none is."""
    names = sorted(k for k, v in environ.items() if v.strip() == url and not k.startswith(_NOT_HOLDERS))
    own = [n for n in names if not n.startswith("INPUT_")]
    found = own or names
    return found[0] if found else None


def probe_options(url: str | None, config_url: str | None, environ: Mapping[str, str]) -> list[str]:
    """`["--endpoint", URL]` when the run asked a URL the config does not name, `["--endpoint", "$VAR"]` when that
    URL (or the config's) is a secret that `VAR` holds; `[]` when `--config` alone reaches the same service."""
    if not url:
        return []  # recorded traces: nothing was asked
    secret = masking.mask(url) != url or public_url(url) != url
    if secret:
        name = holder(url, environ)
        if name is not None:
            return ["--endpoint", "$" + name]
        if url != config_url and masking.mask(url) == url:
            # Credentials or a query, held by no variable: the URL without them, the reader brings their own.
            return ["--endpoint", public_url(url)]
        return []
    return [] if url == config_url else ["--endpoint", url]
