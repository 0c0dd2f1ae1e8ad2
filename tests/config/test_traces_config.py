"""`traces:` in ragjudge.yml (`config/traces_config.py`): absent by default, its keys and their checks, and the
extra it needs (exit 2 naming `pip install 'ragjudge[traces]'`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ragjudge.config.loader import load_config
from tests.config.files import config_error, run_cli, write

pytestmark = pytest.mark.usefixtures("isolated")


def test_absent_by_default(tmp_path: Path) -> None:
    config = load_config(write(tmp_path / "ragjudge.yml", "endpoint: {url: 'http://127.0.0.1:9/ask'}\n"))
    assert config.traces is None


def test_the_issue_contract_keys_read_with_defaults(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path / "ragjudge.yml",
            "traces:\n  receive: 127.0.0.1:4318\n  settle_s: 5\n  export: {url: 'http://127.0.0.1:4318'}\n",
        )
    )
    traces = config.traces
    assert traces is not None
    assert traces.bind() == ("127.0.0.1", 4318)
    assert traces.settle_s == 5.0
    assert traces.export is not None and traces.export.url == "http://127.0.0.1:4318"
    assert (traces.conventions, traces.documents, traces.id_key, traces.store) == (None, None, None, None)
    assert (traces.max_body_bytes, traces.max_spans, traces.max_attribute_chars) == (4_000_000, 100_000, 20_000)
    assert traces.is_loopback()


def test_an_empty_section_takes_every_default(tmp_path: Path) -> None:
    config = load_config(write(tmp_path / "ragjudge.yml", "traces: {}\n"))
    assert config.traces is not None and config.traces.receive == "127.0.0.1:4318"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("traces: {receive: '4318'}", "traces.receive: must be HOST:PORT, e.g. 127.0.0.1:4318 (port 0: any free port)"),
        ("traces: {receive: '127.0.0.1:99999'}", "traces.receive: must be HOST:PORT"),
        ("traces: {documents: first}", "traces.documents: must be `last` or `all`"),
        ("traces: {settle_s: -1}", "traces.settle_s: Input should be greater than or equal to 0"),
        ("traces: {recieve: '127.0.0.1:1'}", "unknown key 'traces.recieve'"),
    ],
)
def test_bad_values_name_their_key(tmp_path: Path, text: str, message: str) -> None:
    error = config_error(write(tmp_path / "ragjudge.yml", text + "\n"))
    assert message in error.message


def test_traces_without_the_extra_is_exit_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # As when opentelemetry-proto is not installed: importing its classes fails.
    monkeypatch.setitem(sys.modules, "opentelemetry.proto.collector.trace.v1", None)
    write(tmp_path / "cases.yaml", "- {id: a, question: q}\n")
    write(
        tmp_path / "ragjudge.yml",
        "endpoint: {url: 'http://127.0.0.1:9/ask'}\ncases: [cases.yaml]\ntraces: {receive: '127.0.0.1:0'}\n",
    )
    code, _, err = run_cli(capsys, "--config", "ragjudge.yml")
    assert code == 2
    assert "ragjudge.yml: traces: reading OpenTelemetry spans needs the `traces` extra" in err
    assert "Tip: install the extra: pip install 'ragjudge[traces]'" in err


def test_a_receive_port_taken_is_exit_2_before_any_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        write(tmp_path / "cases.yaml", "- {id: a, question: q}\n")
        write(
            tmp_path / "ragjudge.yml",
            "endpoint: {url: 'http://127.0.0.1:9/ask'}\ncases: [cases.yaml]\n"
            f"traces: {{receive: '127.0.0.1:{port}'}}\n",
        )
        code, _, err = run_cli(capsys, "--config", "ragjudge.yml")
    assert code == 2
    assert f"ragjudge.yml: traces.receive: cannot listen on 127.0.0.1:{port}: Address already in use" in err
    assert "Tip: choose a free port (0 picks one), or stop what listens there" in err


def test_a_receiver_on_another_host_needs_allow_remote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "cases.yaml", "- {id: a, question: q}\n")
    write(
        tmp_path / "ragjudge.yml",
        "endpoint: {url: 'http://127.0.0.1:9/ask'}\ncases: [cases.yaml]\ntraces: {receive: '0.0.0.0:4318'}\n",
    )
    code, _, err = run_cli(capsys, "--config", "ragjudge.yml")
    assert code == 2
    assert (
        "ragjudge.yml: traces.receive: 0.0.0.0:4318 is not a loopback address: spans would come from the network" in err
    )
