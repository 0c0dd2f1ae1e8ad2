"""The sandbox the request templates render in, bounded in size (`endpoint.max_request_bytes`).

Jinja's sandbox keeps a template from reaching Python's internals, not from growing: `{{ "a" * 300000000 }}`
built 300 MB before anything could measure it. Here every way a template can make a large value is checked
before the value is made: the operators `*`, `+`, `**` and `%`, every call (methods and macros), every filter
(with the projected size of `join`, `replace` and `indent`), and what a `namespace` keeps; and the output is
counted as it is produced, so rendering stops at the limit rather than finishing and then being measured.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from jinja2 import Template
from jinja2.exceptions import SecurityError
from jinja2.nodes import EvalContext
from jinja2.runtime import Context
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import Namespace


class RenderTooLarge(SecurityError):
    """The template would render (or build) more than the limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"over {limit:,} bytes")
        self.limit = limit


_WIDTH = re.compile(r"%[#0\- +]*(\d*)(?:\.(\d+))?|\{[^{}]*?[:<>^=]?(\d+)(?:\.(\d+))?[^{}]*\}")


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str | bytes | list | tuple | dict) else 0


class BoundedSandbox(SandboxedEnvironment):
    """A `SandboxedEnvironment` in which no value and no output grows past `max_bytes`."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, max_bytes: int, **options: Any) -> None:
        super().__init__(**options)
        self.max_bytes = max_bytes
        self.filters = {name: self._bounded_filter(name, f) for name, f in self.filters.items()}
        self.globals["namespace"] = self._namespace_class()

    def _check(self, size: int) -> None:
        if size > self.max_bytes:
            raise RenderTooLarge(self.max_bytes)

    def _check_args(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
        for value in (*args, *kwargs.values()):
            if isinstance(value, int) and not isinstance(value, bool):
                self._check(abs(value))  # a width, a count or a repetition this large makes text this large
            else:
                self._check(_size(value))

    def _check_widths(self, spec: str) -> None:
        for match in _WIDTH.finditer(spec):
            for number in match.groups():
                if number and len(number) <= 20:
                    self._check(int(number))
                elif number:
                    raise RenderTooLarge(self.max_bytes)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, count in ((left, right), (right, left)):
                if _size(seq) and isinstance(count, int):
                    self._check(_size(seq) * max(count, 0))
        elif operator == "+":
            self._check(_size(left) + _size(right))
        elif operator == "**":
            if isinstance(left, int) and isinstance(right, int) and abs(left) > 1 and right > 0:
                self._check(left.bit_length() * right // 8)
        elif operator == "%" and isinstance(left, str):
            self._check_widths(left)
            self._check_args(right if isinstance(right, tuple) else (right,), {})
        result = super().call_binop(context, operator, left, right)
        self._check(_size(result))
        return result

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        __self._check_args(args, kwargs)
        # The sandbox hands out `str.format` wrapped; the string it formats is the wrapped method's `__self__`.
        method = getattr(__obj, "__wrapped__", __obj)
        if getattr(method, "__name__", "") in ("format", "format_map") and isinstance(
            getattr(method, "__self__", None), str
        ):
            __self._check_widths(method.__self__)
        result = super().call(__context, __obj, *args, **kwargs)
        __self._check(_size(result))
        return result

    def _bounded_filter(self, name: str, f: Callable[..., Any]) -> Callable[..., Any]:
        def bounded(*args: Any, **kwargs: Any) -> Any:
            # Context-taking filters get the context or environment first: only the values are checked.
            values = tuple(a for a in args if not isinstance(a, Context | EvalContext | SandboxedEnvironment))
            self._check_args(values, kwargs)
            if values:
                if name == "format" and isinstance(values[0], str):
                    self._check_widths(values[0])
                self._check(_projected(name, values[0], values[1:], kwargs))
            result = f(*args, **kwargs)
            self._check(_size(result))
            return result

        for attr in ("jinja_pass_arg",):  # how Jinja knows to pass the context, the eval context or the environment
            if hasattr(f, attr):
                setattr(bounded, attr, getattr(f, attr))
        bounded.__name__ = getattr(f, "__name__", name)
        return bounded

    def _namespace_class(self) -> type[Namespace]:
        check = self._check

        class BoundedNamespace(Namespace):
            def __setitem__(self, name: str, value: Any) -> None:
                check(_size(value))
                super().__setitem__(name, value)

        return BoundedNamespace

    def render(self, template: Template, context: Mapping[str, Any]) -> str:
        """`template` rendered, stopped with RenderTooLarge as soon as its output passes the limit."""
        out: list[str] = []
        size = 0
        for chunk in template.generate(context):
            size += len(chunk.encode("utf-8", "surrogatepass"))
            self._check(size)
            out.append(chunk)
        return "".join(out)


def _projected(name: str, value: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> int:
    """What a filter that multiplies its input would make, before it makes it."""
    if name == "join" and isinstance(value, list | tuple | range):
        sep = args[0] if args else kwargs.get("d", "")
        return sum(len(str(item)) for item in value) + _size(sep) * max(len(value) - 1, 0)
    if name == "replace" and isinstance(value, str) and len(args) >= 2:
        old, new = str(args[0]), str(args[1])
        return len(value) + value.count(old) * max(len(new) - len(old), 0)
    if name == "indent" and isinstance(value, str):
        width = args[0] if args else kwargs.get("width", 4)
        each = width if isinstance(width, int) else _size(width)
        return len(value) + (value.count("\n") + 1) * each
    return 0
