"""The JSON report (the machine contract) and the Markdown comment (for people)."""

from __future__ import annotations

from ragjudge.report.model import Report
from ragjudge.report.reading import load_report

__all__ = ["Report", "load_report"]
