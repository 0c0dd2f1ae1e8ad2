"""A case's tool conditions (`tools:`): which tools the agent must call, must not call, with which arguments, and
how the calls it made must match the ones listed (LangChain agentevals' strict / unordered / subset / superset).

Checked deterministically before any judge (`gate/tool_checks.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Order = Literal["strict", "unordered", "subset", "superset"]

Scalar = str | int | float | bool | None


class ToolsModel(BaseModel):
    """`tools:` as written in a case file."""

    model_config = ConfigDict(extra="forbid")

    called: list[str] = Field(default_factory=list, description="Tools the agent is to call.")
    not_called: list[str] = Field(default_factory=list, description="Tools the agent must never call on this case.")
    args: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Per tool, arguments one of its calls must have had, each equal: `{lookup_order: {order_id: "
        '"A123"}}`.',
    )
    order: Order = Field(
        "unordered",
        description="How the calls made match `called`: `strict` (exactly these, in this order), `unordered` "
        "(exactly these tools, any order), `subset` (none but these; some may be skipped), `superset` (at least "
        "these; others too).",
    )

    @model_validator(mode="after")
    def _consistent(self) -> ToolsModel:
        both = sorted(set(self.called) & set(self.not_called))
        if both:
            raise ValueError(f"{', '.join(both)}: both called and not_called")
        if any(not name.strip() for name in (*self.called, *self.not_called, *self.args)):
            raise ValueError("a tool name is empty")
        if not (self.called or self.not_called or self.args):
            raise ValueError("give at least one of called, not_called, args")
        return self


@dataclass(frozen=True)
class ToolConditions:
    """A case's tool conditions, ready to check."""

    called: tuple[str, ...] = ()
    not_called: tuple[str, ...] = ()
    args: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    """Per tool, the arguments one of its calls must have had."""
    order: Order = "unordered"

    @classmethod
    def of(cls, model: ToolsModel | None) -> ToolConditions | None:
        if model is None:
            return None
        return cls(
            called=tuple(model.called),
            not_called=tuple(model.not_called),
            args=tuple((tool, tuple(expected.items())) for tool, expected in model.args.items()),
            order=model.order,
        )

    def as_dict(self) -> dict[str, Any]:
        """As written, for the report."""
        return {
            "called": list(self.called),
            "not_called": list(self.not_called),
            "args": {tool: dict(expected) for tool, expected in self.args},
            "order": self.order,
        }
