"""What every section of `ragjudge.yml` shares: unknown keys are errors, values are frozen, `.inf` and `.nan` refused.

Key names are part of the public contract. Unknown keys are errors naming the key's path; values are never
echoed in errors, because some are secrets.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

MAX_TIMEOUT_S = 3600.0
"""An hour: a longer per-call timeout is a typo, and a gate must end."""


class Section(BaseModel):
    """A block of keys in `ragjudge.yml`; every model of the file derives from it."""

    # `.inf` and `.nan` are valid YAML floats: refused here, naming the key, rather than
    # ending as an OverflowError in a socket timeout or a rule that never fails.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
