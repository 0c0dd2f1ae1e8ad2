"""A reply read into a `Trace` as a run reads it, for the client's calls and `ragjudge probe` alike: one JSON
body as the declared protocol shapes it, or a stream gathered by its reader (`stream.Assembly`); then the
mapping (`endpoint/reply.py`), the declines (`endpoint/refusal.py`), and the check of what the answer reads
(`endpoint/answer_check.py`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ragjudge.config.endpoint_config import EndpointConfig
from ragjudge.endpoint import protocols, stream
from ragjudge.endpoint.answer_check import check_answer
from ragjudge.endpoint.decoding import Decoded, duplicate_warnings
from ragjudge.endpoint.excerpt import error_excerpt, header_secrets, mask
from ragjudge.endpoint.refusal import RefusalRules
from ragjudge.endpoint.reply import ReplyShapeError, parse_reply
from ragjudge.endpoint.trace import StreamNotes, Trace


class ReplyReader:
    """Reads replies under one endpoint config; holds nothing from one reply to the next."""

    def __init__(self, config: EndpointConfig) -> None:
        self.mapping = config.response
        self.protocol = protocols.declared(config.protocol)
        """The declared stream protocol; None: streams are read by `protocols.generic`."""
        self._refusal = RefusalRules.from_config(config.refusal)
        self._secrets = header_secrets(config.headers)
        self._ignored = frozenset(config.ignore_failure_shapes)

    def assembly(self, kind: str) -> stream.Assembly:
        """A stream's reader: the declared protocol, or the generic one for the mapping and the format."""
        protocol = self.protocol or protocols.generic(self.mapping.answer_delta, kind)
        return stream.Assembly(
            self.mapping,
            excerpt=lambda b: mask(error_excerpt(b), self._secrets),
            protocol=protocol,
            kind=kind,
            ignored=self._ignored,
        )

    def as_protocol(self, decoded: Decoded) -> Decoded:
        """One JSON body as the declared protocol reads it (the Responses API's `output` items)."""
        if self.protocol is None:
            return decoded
        return dataclasses.replace(decoded, data=protocols.read_body(self.protocol, decoded.data, self.mapping))

    def body(self, decoded: Decoded, elapsed_ms: float, question: str | None) -> Trace:
        """One JSON body read: the declared protocol's shape, the mapping, its repeated keys, the answer check.
        Raises ReplyShapeError."""
        decoded = self.as_protocol(decoded)
        trace = self._parse(decoded.data, elapsed_ms)
        trace = self._checked(trace, decoded.data, question)
        if decoded.duplicate_keys:
            trace = dataclasses.replace(trace, warnings=duplicate_warnings(decoded))
        return trace

    def streamed(
        self,
        reply: dict[str, Any],
        elapsed_ms: float,
        ttft_ms: float | None,
        how: StreamNotes,
        question: str | None,
    ) -> Trace:
        """A stream's assembled reply read, with its time to first token and how it was read. Raises
        ReplyShapeError."""
        trace = self._parse(reply, elapsed_ms)
        trace = dataclasses.replace(trace, ttft_ms=ttft_ms, stream=how)
        return self._checked(trace, reply, question)

    def _parse(self, data: Any, elapsed_ms: float) -> Trace:
        try:
            trace = parse_reply(data, self.mapping, elapsed_ms, self._refusal)
        except RecursionError:
            raise ReplyShapeError("reply is nested too deeply to read") from None
        tool = self.mapping.retrieval_tool
        if tool and trace.tool_calls is not None and all(call.name != tool for call in trace.tool_calls):
            trace = dataclasses.replace(trace, retrieval_tool_missed=tool)
        return trace

    def _checked(self, trace: Trace, data: Any, question: str | None) -> Trace:
        """The trace, noting an answer that is the question, a passage's text or an id (endpoint/answer_check.py)."""
        flag = check_answer(data, self.mapping, trace, question)
        if flag is None:
            return trace
        return dataclasses.replace(trace, read=dataclasses.replace(trace.read, answer_flag=flag))
