"""The JSON report (the machine contract) and the Markdown comment (for people)."""

from __future__ import annotations

from ragjudge.report.model import Report, load_report

__all__ = ["Report", "load_report"]
