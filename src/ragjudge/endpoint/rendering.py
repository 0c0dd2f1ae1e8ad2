"""A case's request: its URL and body rendered from the config's templates, and the headers sent with them.

The templates are compiled once, in the bounded sandbox (`endpoint/templating.py`). What the URL template
inserts is URL-encoded; a JSON body is checked to be JSON before anything is sent. A template that fails, or
renders too large, is the config's error naming the case, except a turn that only the service's earlier
answers made too large (`TurnOutgrown`), which is that turn's error.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from jinja2 import StrictUndefined, Template, TemplateError, Undefined

from ragjudge.cases.case import Case
from ragjudge.cases.conversations import template_variables
from ragjudge.config.endpoint_config import EndpointConfig
from ragjudge.endpoint.dialogue import TurnOutgrown, carries_replies
from ragjudge.endpoint.templating import BoundedSandbox, RenderTooLarge
from ragjudge.errors import ConfigError


class RequestRenderer:
    """Renders each case's request from the config's URL and body templates."""

    def __init__(self, config: EndpointConfig, url: str, *, literal_url: bool = False) -> None:
        """`literal_url`: `url` is sent exactly as given, never compiled or rendered as a template: a URL from
        someone other than the config's author (`ragjudge serve`'s callers) is data, whatever braces it holds."""
        self.config = config
        self.url = url
        cap = config.max_request_bytes
        env = BoundedSandbox(cap, undefined=StrictUndefined, autoescape=False)
        # `tojson` must fail on an undefined name the way `{{ name }}` does.
        env.policies["json.dumps_function"] = _strict_dumps
        # What the URL template inserts is URL-encoded: a question with `&`, `#` or `/` in it
        # stays one query value and cannot add parameters or change the path.
        url_env = BoundedSandbox(cap, undefined=StrictUndefined, autoescape=False, finalize=_url_quote)
        urlencode = url_env.filters["urlencode"]
        url_env.filters["urlencode"] = lambda value: _Encoded(urlencode(value))  # encoded once, not twice
        self._env, self._url_env = env, url_env
        self._url: Template | None = None
        if not literal_url:
            try:
                self._url = url_env.from_string(url)
            except TemplateError as exc:
                raise ConfigError(f"endpoint.url: invalid template: {exc}") from None
        try:
            self._body = env.from_string(config.body)
        except TemplateError as exc:
            raise ConfigError(f"endpoint.body: invalid template: {exc}") from None

    def render(self, case: Case) -> tuple[str, str | None]:
        """The URL and body for one case; a template error is a config error naming the case, and a turn that
        renders too large only with the service's earlier answers is `TurnOutgrown`."""
        context = {**template_variables(case), "model": self.config.model}
        key = "endpoint.url"
        try:
            url = self.url if self._url is None else self._url_env.render(self._url, context)
            key = "endpoint.body"
            body = None if self.config.method == "GET" else self._env.render(self._body, context)
        except RenderTooLarge as exc:
            if carries_replies(case):
                raise TurnOutgrown(key, exc.limit, len(case.history)) from None
            raise ConfigError(
                f"{key}: the template renders over {exc.limit:,} bytes for case {case.id!r} "
                f"(endpoint.max_request_bytes: {exc.limit:,}); rendering was stopped there",
                tip='look for a repetition in the template (such as `"a" * 1000000`), '
                "or raise endpoint.max_request_bytes",
            ) from None
        except Exception as exc:  # a filter in the team's template may raise anything
            detail = str(exc) if isinstance(exc, TemplateError) else f"{type(exc).__name__}: {exc}"
            raise ConfigError(
                f"{key}: template failed for case {case.id!r}: {detail}",
                tip="the template sees `question`, `case` (id, question, expected, category, tags, ...), `messages`, "
                "`history`, `turn`, `conversation_id` and `model`",
            ) from None
        if body is not None and self._sends_json():
            try:
                json.loads(body)
            except json.JSONDecodeError as exc:
                raise ConfigError(
                    f"endpoint.body: the rendered body for case {case.id!r} is not valid JSON: "
                    f"{exc.msg} (line {exc.lineno}, column {exc.colno})",
                    tip="insert text with `| tojson`, which quotes and escapes it: "
                    '{"question": {{ question | tojson }}}',
                ) from None
        return url, body

    def _sends_json(self) -> bool:
        """The body is JSON unless the team's headers declare another content type."""
        declared = next((v for k, v in self.config.headers.items() if k.lower() == "content-type"), None)
        return declared is None or "json" in declared.lower()

    def headers(self, body: str | None) -> dict[str, str]:
        """The headers a call sends (the team's headers last, so they win)."""
        headers = {"Accept": "application/json", "User-Agent": "ragjudge"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        headers.update(self.config.headers)
        return headers


def _strict_dumps(obj: Any, **kwargs: Any) -> str:
    def default(value: Any) -> Any:
        if isinstance(value, Undefined):
            str(value)  # StrictUndefined raises UndefinedError naming the variable
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    return json.dumps(obj, default=default, **kwargs)


class _Encoded(str):
    """Text the template already URL-encoded (`| urlencode`)."""


def _url_quote(value: Any) -> Any:
    # `finalize` sees every `{{ ... }}` result; literal template text is left as written.
    if value is None or isinstance(value, _Encoded):
        return value
    return quote(str(value), safe="")
