"""The base of every block of the JSON report, and of the blocks written back with the keys they were given.

Every block keeps keys it does not know (`extra="allow"`): a report written by a newer ragjudge, or by an older
one with keys since dropped, still loads. Blocks whose keys depend on what happened (the judge's, provenance,
a run's) are `GivenKeysBlock`s: they write the keys they were built or read with, and no others, so a report
read back and written again is written as it was.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

_FIELD_SETS: dict[frozenset[str], set[str]] = {}


class Block(BaseModel):
    """A block of the report: keys it does not know are kept."""

    model_config = ConfigDict(extra="allow")

    def model_post_init(self, context: Any, /) -> None:
        # pydantic gives each instance its own set of the field names it was given: about 2 KB for a case's
        # record, more than the record's values. Records given the same names share one set.
        names = self.__pydantic_fields_set__
        shared = _FIELD_SETS.setdefault(frozenset(names), names)
        object.__setattr__(self, "__pydantic_fields_set__", shared)

    def __setattr__(self, name: str, value: Any) -> None:
        # pydantic adds an assigned field's name to the instance's set: first it gets a set of its own.
        object.__setattr__(self, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        super().__setattr__(name, value)

    def is_empty(self) -> bool:
        """True for a block given no key at all (`{}`, as older reports wrote some blocks)."""
        return not self.model_fields_set and not self.model_extra


class GivenKeysBlock(Block):
    """A block written with the keys it was given (in its fields' order, then unknown ones), never a default.

    A field left out is absent from the JSON, not written as its default: the block of a case the judge never
    saw has no `declined`, an older report's `{}` stays `{}`.
    """

    @model_serializer(mode="wrap")
    def _given_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        given = self.model_fields_set
        if len(given) == len(type(self).model_fields):
            return data
        fields = type(self).model_fields
        return {key: value for key, value in data.items() if key in given or key not in fields}
