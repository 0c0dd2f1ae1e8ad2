"""Workflow commands: escaping, masking, groups, stop-commands; plain lines outside Actions."""

from __future__ import annotations

import io

from ragjudge.github.workflow_commands import WorkflowLog, command, escape_data, escape_property


def test_escape_data_escapes_percent_cr_lf_only() -> None:
    assert escape_data("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext: a, b"
    assert escape_data("%0A") == "%250A"  # an already-escaped-looking text stays literal


def test_escape_property_also_escapes_colon_and_comma() -> None:
    assert escape_property("case a:b, c%\n") == "case a%3Ab%2C c%25%0A"


def test_command_formats_properties_and_skips_empty_ones() -> None:
    assert command("error", "m", {"title": "t: x", "file": ""}) == "::error title=t%3A x::m"
    assert command("endgroup") == "::endgroup::"
    assert command("warning", "line1\nline2") == "::warning::line1%0Aline2"


def test_log_in_actions_prints_commands() -> None:
    out = io.StringIO()
    log = WorkflowLog(True, out=out)
    log.issue("warning", "w\nx", "T")
    log.add_mask("s3cr3t-value")
    log.add_mask("multi\nline")
    with log.group("ragjudge run"), log.commands_stopped():
        print("::error::from the CLI", file=out)
    lines = out.getvalue().splitlines()
    assert lines[:5] == [
        "::warning title=T::w%0Ax",
        "::add-mask::s3cr3t-value",
        "::add-mask::multi",
        "::add-mask::line",
        "::group::ragjudge run",
    ]
    token = lines[5].removeprefix("::stop-commands::")
    assert len(token) == 32 and lines[6:] == ["::error::from the CLI", f"::{token}::", "::endgroup::"]


def test_stop_commands_token_is_random() -> None:
    tokens = set()
    for _ in range(5):
        out = io.StringIO()
        with WorkflowLog(True, out=out).commands_stopped():
            pass
        tokens.add(out.getvalue().splitlines()[0])
    assert len(tokens) == 5


def test_log_outside_actions_prints_plain_lines_and_never_a_secret() -> None:
    out, err = io.StringIO(), io.StringIO()
    log = WorkflowLog(False, out=out, err=err)
    log.add_mask("s3cr3t-value")
    log.issue("error", "gate failed")
    with log.group("g"), log.commands_stopped():
        pass
    assert out.getvalue() == ""
    assert err.getvalue() == "ragjudge: error: gate failed\n"
