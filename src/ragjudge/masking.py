"""Secrets, and the one function that keeps them out of every output.

A secret is registered once, where it enters the process (a `${VAR}` substituted
into a URL, header, body or key; the judge's API key from any source; the GitHub
token), and every place text leaves the process passes it through `mask`: stdout
and stderr (wrapped by `masked_std`), the report, the comment, the log, the job
summary, `$GITHUB_OUTPUT`, workflow commands and the prompts sent to a judge.

A secret is masked in the forms it takes on the way out too: JSON-escaped (a key
holding `"` or `\\` is written as `\\"` in the log and the report), URL-encoded
(substituted into `endpoint.url`), and, for an `Authorization`-style value
`Bearer <token>`, the token alone.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TextIO
from urllib.parse import quote, quote_plus

from ragjudge.safetext import clean_text

MASK = "***"
MIN_LENGTH = 4
"""Shorter values are not treated as secrets: masking `8` or `yes` everywhere would garble every output."""

SECRET_VARIABLES = ("GITHUB_TOKEN", "GH_TOKEN", "OPENAI_API_KEY", "INPUT_GITHUB-TOKEN", "INPUT_JUDGE-API-KEY")
"""Environment variables that hold a secret whether or not the config mentions them."""

_lock = threading.Lock()
_secrets: frozenset[str] = frozenset()
_pattern: re.Pattern[str] | None = None
_depth = 0


def forms(value: str) -> set[str]:
    """`value` as it may appear in an output: raw, JSON-escaped, URL-encoded; and the token of `Bearer <token>`."""
    found = {value}
    parts = value.split()
    if len(parts) > 1:
        # "Bearer abc": the token alone must be masked too (the scheme word is not a secret).
        found.update(part for part in parts[1:] if len(part) >= MIN_LENGTH)
    for item in list(found):
        found.add(json.dumps(item, ensure_ascii=False)[1:-1])
        found.add(json.dumps(item)[1:-1])
        found.add(quote(item, safe=""))
        found.add(quote_plus(item, safe=""))
    return {f for f in found if len(f) >= MIN_LENGTH}


def register(*values: str | None) -> None:
    """Treat each value (when at least `MIN_LENGTH` characters long) as a secret from now on."""
    global _secrets, _pattern
    new: set[str] = set()
    for value in values:
        if value and len(value) >= MIN_LENGTH:
            new |= forms(value)
    if not new:
        return
    with _lock:
        if new <= _secrets:
            return
        _secrets = _secrets | new
        # Longest first, so that a secret containing another is masked whole.
        ordered = sorted(_secrets, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(s) for s in ordered))


def register_environ(environ: Mapping[str, str] | None = None) -> None:
    """Register the well-known secret variables (`SECRET_VARIABLES`) that are set."""
    env = os.environ if environ is None else environ
    register(*(env.get(name) for name in SECRET_VARIABLES))


def secrets() -> frozenset[str]:
    """Every registered form (for tests and for `::add-mask::`)."""
    return _secrets


def mask(text: str) -> str:
    """`text` with every registered secret (in every form) replaced by `***`."""
    pattern = _pattern
    if pattern is None or not text:
        return text
    return pattern.sub(MASK, text)


def mask_data(node: Any) -> Any:
    """A JSON-like tree with every string (keys included) masked."""
    if isinstance(node, str):
        return mask(node)
    if isinstance(node, list | tuple):
        return [mask_data(item) for item in node]
    if isinstance(node, dict):
        return {mask_data(key) if isinstance(key, str) else key: mask_data(value) for key, value in node.items()}
    return node


def mask_lines(lines: Iterable[str]) -> list[str]:
    return [mask(line) for line in lines]


@contextmanager
def scope() -> Iterator[None]:
    """One process run (`cli.main`, the action's `main`): secrets registered inside are forgotten at the end.

    Nested scopes share the outer one's secrets, so the CLI run in-process by the action keeps
    masking what the action registered, and the action keeps masking what the run registered.
    """
    global _depth, _secrets, _pattern
    with _lock:
        if _depth == 0:
            _secrets, _pattern = frozenset(), None
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _secrets, _pattern = frozenset(), None


class MaskedStream:
    """A text stream that masks what is written to it before passing it on."""

    def __init__(self, target: TextIO) -> None:
        self.raw = target
        """The stream underneath: only `::add-mask::` writes to it directly."""
        self.reader_gone = False
        """The reader closed its end (`ragjudge run | head`): what is written from then on is dropped."""

    def write(self, text: str) -> int:
        if not self.reader_gone:
            try:
                # A lone surrogate would make the console's encoder raise; a control character could drive the
                # terminal.
                self.raw.write(clean_text(mask(text)))
            except BrokenPipeError:
                self._drop_the_rest()
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self.reader_gone:
            try:
                self.raw.flush()
            except BrokenPipeError:
                self._drop_the_rest()

    def _drop_the_rest(self) -> None:
        # The reader has what it wanted; the command goes on, writes its files and keeps its exit code. The file
        # descriptor is pointed at /dev/null, so that what is still buffered, and the interpreter's last flush,
        # meet no closed pipe either.
        self.reader_gone = True
        with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self.raw.fileno())
            finally:
                os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def unmasked(stream: TextIO) -> TextIO:
    """The stream under any `MaskedStream` wrapping."""
    while isinstance(stream, MaskedStream):
        stream = stream.raw
    return stream


@contextmanager
def masked_std() -> Iterator[None]:
    """stdout and stderr masked for the duration (argparse, print, warnings: everything)."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, MaskedStream):
        sys.stdout = MaskedStream(sys.stdout)
    if not isinstance(sys.stderr, MaskedStream):
        sys.stderr = MaskedStream(sys.stderr)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            if isinstance(stream, MaskedStream):
                stream.flush()  # a closed pipe is met here, inside the wrapper that knows what to do with it
        sys.stdout, sys.stderr = saved
