"""Workflow commands: `::error::`, `::warning::`, `::add-mask::`, `::group::`, `::stop-commands::`.

The runner reads them from the step's stdout, one per line; `%`, CR and LF are escaped
in the message, and `:` and `,` too in properties, so a value can neither end the
command early nor start another one. Outside Actions nothing would read them (and
an `::add-mask::` line would print the secret it means to hide), so `WorkflowLog`
prints plain lines there instead.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TextIO

from ragjudge import masking
from ragjudge.safetext import clean_text

MAX_ANNOTATIONS = 10
"""GitHub shows at most 10 annotations of each kind per step; more are dropped."""


def escape_data(text: str) -> str:
    return clean_text(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str = "", properties: Mapping[str, str] | None = None) -> str:
    """One workflow command line, escaped, with every registered secret masked."""
    props = ",".join(f"{k}={escape_property(masking.mask(v))}" for k, v in (properties or {}).items() if v)
    return f"::{name}{' ' + props if props else ''}::{escape_data(masking.mask(message))}"


class WorkflowLog:
    """Where the action reports to people: workflow commands on a runner, plain lines elsewhere."""

    def __init__(self, in_actions: bool, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.in_actions = in_actions
        self._out = out
        self._err = err

    @property
    def out(self) -> TextIO:
        return self._out or sys.stdout

    @property
    def err(self) -> TextIO:
        return self._err or sys.stderr

    def issue(self, kind: str, message: str, title: str | None = None, where: Mapping[str, str] | None = None) -> None:
        """An `::error::`, `::warning::` or `::notice::` annotation; `where`: its `file` and `line`."""
        if self.in_actions:
            properties = {**(where or {}), **({"title": title} if title else {})}
            print(command(kind, message, properties or None), file=self.out, flush=True)
        else:
            print(f"ragjudge: {kind}: {message}", file=self.err, flush=True)

    def add_mask(self, secret: str) -> None:
        """Ask the runner to show *** for `secret` from here on (each line of a multi-line one)."""
        if not self.in_actions:
            return
        # Written past the mask (which would turn the command into `::add-mask::***`).
        out = masking.unmasked(self.out)
        for line in secret.splitlines():
            if line.strip():
                out.write(f"::add-mask::{escape_data(line)}\n")
                out.flush()

    @contextmanager
    def group(self, title: str) -> Iterator[None]:
        """A collapsible section of the log."""
        if not self.in_actions:
            yield
            return
        print(command("group", title), file=self.out, flush=True)
        try:
            yield
        finally:
            _flush()
            print(command("endgroup"), file=self.out, flush=True)

    @contextmanager
    def commands_stopped(self) -> Iterator[None]:
        """Print untrusted text (the CLI's log quotes case data) without it being read as commands.

        The resume token is random, so the text cannot guess it and switch commands back on.
        """
        if not self.in_actions:
            yield
            return
        token = secrets.token_hex(16)
        print(command("stop-commands", token), file=self.out, flush=True)
        try:
            yield
        finally:
            _flush()
            print(f"::{token}::", file=self.out, flush=True)


def _flush() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
