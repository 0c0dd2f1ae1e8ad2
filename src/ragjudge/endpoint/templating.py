"""The sandbox the request templates render in, bounded in size (`endpoint.max_request_bytes`).

Jinja's sandbox keeps a template from reaching Python's internals, not from growing: `{{ "a" * 300000000 }}`
built 300 MB before anything could measure it. Here every way a template can make a large value is checked
before the value is made: the operators `*`, `+`, `**` and `%`, every call (methods and macros), every filter
(with the projected size of `join`, `replace` and `indent`), and what a `namespace` keeps; and the output is
counted as it is produced, so rendering stops at the limit rather than finishing and then being measured.
"""

from __future__ import annotations

import re
import string
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


# A printf conversion's width and precision (`%300000000s`, `%.5f`); `*` takes them from the arguments.
_PRINTF = re.compile(r"%[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?[a-zA-Z%]")
_DIGITS = re.compile(r"\d+")
# Methods and filters whose integer arguments are widths or counts: the text they make is at least that long.
_WIDTH_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})
_WIDTH_FILTERS = frozenset({"center", "indent", "truncate", "wordwrap", "batch", "slice"})


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

    def _check_sizes(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
        for value in (*args, *kwargs.values()):
            self._check(_size(value))

    def _check_ints(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
        # Only where an integer is a width or a count: elsewhere it is a value (a timestamp, an id).
        for value in (*args, *kwargs.values()):
            if isinstance(value, int) and not isinstance(value, bool):
                self._check(abs(value))

    def _check_number(self, digits: str) -> None:
        self._check(int(digits) if len(digits) <= 20 else self.max_bytes + 1)

    def _check_printf(self, spec: str, args: tuple[Any, ...]) -> None:
        star = False
        for match in _PRINTF.finditer(spec):
            for number in match.groups():
                if number == "*":
                    star = True
                elif number:
                    self._check_number(number)
        if star:
            self._check_ints(args, {})

    def _check_format(self, spec: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
        try:
            fields = [f[2] or "" for f in string.Formatter().parse(spec)]
        except ValueError:
            return  # malformed: `format` raises its own error
        for field_spec in fields:
            for number in _DIGITS.findall(field_spec):
                self._check_number(number)
            if "{" in field_spec:  # a nested field: the width comes from the arguments
                self._check_ints(args, kwargs)

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
            values = right if isinstance(right, tuple) else (right,)
            self._check_sizes(values, {})
            self._check_printf(left, values)
        result = super().call_binop(context, operator, left, right)
        self._check(_size(result))
        return result

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        __self._check_sizes(args, kwargs)
        # The sandbox hands out `str.format` wrapped; the string a method works on is the wrapped one's `__self__`.
        method = getattr(__obj, "__wrapped__", __obj)
        owner, name = getattr(method, "__self__", None), getattr(method, "__name__", "")
        if isinstance(owner, str):
            if name in _WIDTH_METHODS:
                __self._check_ints(args, kwargs)
            elif name in ("format", "format_map"):
                __self._check_format(owner, args, kwargs)
            elif name == "replace":
                __self._check(_projected("replace", owner, args, kwargs))
            elif name == "join" and args:
                __self._check(_projected("join", args[0], (owner,), {}))
        result = super().call(__context, __obj, *args, **kwargs)
        __self._check(_size(result))
        return result

    def _bounded_filter(self, name: str, f: Callable[..., Any]) -> Callable[..., Any]:
        def bounded(*args: Any, **kwargs: Any) -> Any:
            # Context-taking filters get the context or environment first: only the values are checked.
            values = tuple(a for a in args if not isinstance(a, Context | EvalContext | SandboxedEnvironment))
            self._check_sizes(values, kwargs)
            if name in _WIDTH_FILTERS:
                self._check_ints(values[1:], kwargs)
            if values:
                if name == "format" and isinstance(values[0], str):
                    self._check_printf(values[0], values[1:])
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
