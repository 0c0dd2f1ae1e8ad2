"""`python -m ragjudge`."""

from __future__ import annotations

from ragjudge.cli import entry

entry()
