"""Calling the RAG endpoint under test and reading its replies."""

from __future__ import annotations

from ragjudge.endpoint.client import EndpointClient, EndpointResult
from ragjudge.endpoint.trace import Passage, Trace

__all__ = ["EndpointClient", "EndpointResult", "Passage", "Trace"]
