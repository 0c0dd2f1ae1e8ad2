"""The error hierarchy, and the one place that maps it to exit codes.

Every failure ragjudge expects is one of these; the CLI catches them once,
prints the message (with a tip when there is one) and exits with the code.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes: the contract CI scripts branch on."""

    PASSED = 0
    GATE_FAILED = 1
    BAD_INPUT = 2
    COULD_NOT_EVALUATE = 3
    INCONCLUSIVE = 4
    STOPPED_BY_SIGINT = 130
    STOPPED_BY_SIGTERM = 143
    """128 + the signal number, what shells and CI runners expect of a command a signal stopped."""


def exit_code_for(verdict: str) -> ExitCode:
    """A gate verdict's exit code: `pass` 0, `fail` 1, anything else (`error`) 3."""
    return {"pass": ExitCode.PASSED, "fail": ExitCode.GATE_FAILED}.get(verdict, ExitCode.COULD_NOT_EVALUATE)


class RagjudgeError(Exception):
    """Base of every error ragjudge reports without a traceback."""

    exit_code: ExitCode = ExitCode.BAD_INPUT

    def __init__(self, message: str, tip: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.tip = tip

    def render(self) -> str:
        text = f"ragjudge: error: {self.message}"
        if self.tip:
            text += f"\nTip: {self.tip}"
        return text


class UsageError(RagjudgeError):
    """Bad command-line usage."""


class ConfigError(RagjudgeError):
    """The config file is missing, unreadable or invalid."""


class CaseFileError(RagjudgeError):
    """A case file (or trace/label file) is missing, unreadable or invalid."""


class FeedbackError(RagjudgeError):
    """Canary feedback counts that are present but wrong (missing arm, negative, dislikes > responses)."""


class EvaluationError(RagjudgeError):
    """Nothing could be evaluated at all (e.g. the endpoint is unreachable)."""

    exit_code = ExitCode.COULD_NOT_EVALUATE


class Interrupted(RagjudgeError):
    """A signal stopped the command before it had what it needs to decide: nothing is decided or written."""

    def __init__(self, message: str, exit_code: ExitCode) -> None:
        super().__init__(message)
        self.exit_code = exit_code
