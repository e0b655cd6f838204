"""`python -m zoo serve`'s start: the flags it refuses before the model loads, and an
address it cannot listen on, named with the reason. No model loads here: a folder that does
not exist shows that each refusal comes first."""

import socket

import pytest
from server_helpers import StubTranslator

import zoo.server
from zoo import cli
from zoo.cli import serve
from zoo.server import ServerLimits, make_app
from zoo.server.http_server import bind, listen


def run(argv, capsys):
    """(exit status, stderr) of `python -m zoo serve ARGV`."""
    with pytest.raises(SystemExit) as stopped:
        cli.main(["serve", *argv])
    return stopped.value.code, capsys.readouterr().err


@pytest.mark.parametrize(
    "port, shown", [("70000", "got 70000"), ("-1", "got -1"), ("http", "got 'http'")]
)
def test_a_port_outside_0_to_65535_is_a_usage_error(tmp_path, capsys, port, shown):
    status, err = run([str(tmp_path / "none"), "--port", port], capsys)
    assert status == 2 and "argument --port" in err and "0 to 65535" in err and shown in err


def test_a_busy_port_is_named_with_its_reason_before_the_model_loads(tmp_path, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, err = run([str(tmp_path / "none"), "--port", str(port)], capsys)
    assert status == 1, err
    assert f"error: cannot listen on 127.0.0.1:{port}: Address already in use" in err
    assert "[Errno" not in err and "zoo output folder" not in err  # the folder never read


def test_a_host_that_does_not_resolve_is_named_with_its_port(tmp_path, capsys):
    status, err = run([str(tmp_path / "none"), "--host", "999.1.1.1", "--port", "0"], capsys)
    assert status == 1 and "error: cannot listen on 999.1.1.1:0: " in err, err
    assert "[Errno" not in err and "Traceback" not in err


@pytest.mark.parametrize("port", [70000, -1])
def test_bind_turns_a_port_out_of_range_into_an_os_error_naming_it(port):
    with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{port}: "):
        bind("127.0.0.1", port)


def test_bind_without_a_backlog_refuses_connections_until_listen():
    sock = bind("127.0.0.1", 0)
    try:
        port = sock.getsockname()[1]
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        listen(sock, 1)
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    finally:
        sock.close()


def test_a_default_beam_flag_above_max_beam_size_is_a_usage_error(tmp_path, capsys):
    argv = [str(tmp_path / "none"), "--max-beam-size", "2", "--beam-size", "5", "--port", "0"]
    status, err = run(argv, capsys)
    assert status == 2, err
    assert "the default beam size, 5 (--beam-size), is above --max-beam-size 2" in err


def test_a_folder_beam_size_above_max_beam_size_is_a_usage_error(tmp_path, capsys, monkeypatch):
    """A request without beam_size searches with the folder's beam: refused at the start
    rather than run above the server's limit."""
    wide = StubTranslator()
    wide.beam_size = 5  # as translator.json's
    monkeypatch.setattr(serve, "load_translator", lambda args: wide)

    def served(*args, **kwargs):
        raise AssertionError("served with a default beam above --max-beam-size")

    monkeypatch.setattr(serve, "HttpServer", served, raising=False)
    monkeypatch.setattr(zoo.server, "HttpServer", served)
    status, err = run([str(tmp_path / "m"), "--max-beam-size", "2", "--port", "0"], capsys)
    assert status == 2, err
    assert "the default beam size, 5 (" in err and "translator.json" in err
    assert "--max-beam-size 2" in err


def test_make_app_refuses_a_translator_wider_than_max_beam_size():
    wide = StubTranslator()
    wide.beam_size = 5
    with pytest.raises(ValueError, match="beam size, 5, is above max_beam_size=4"):
        make_app(wide, limits=ServerLimits(max_beam_size=4))
    make_app(wide, limits=ServerLimits(max_beam_size=5))  # at the limit: served
