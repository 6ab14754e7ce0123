"""Shell-output compression and compressed command runs."""

from __future__ import annotations

import pathlib
import threading
import time
from collections.abc import Callable

import pytest

import codeoid

LONG_LS = "".join(f"-rw-r--r-- 1 dev dev {i * 10} Jan  5 10:00 file_{i}.rs\n" for i in range(400)).encode()


def test_compress_long_output(memory: codeoid.Memory) -> None:
    compressed = memory.compress("ls -la", LONG_LS)
    assert compressed is not None
    assert compressed.rule == "ls"
    assert compressed.bytes_in == len(LONG_LS)
    assert compressed.bytes_out == len(compressed.text.encode()) < compressed.bytes_in
    assert compressed.kept_ratio == pytest.approx(compressed.bytes_out / compressed.bytes_in)
    assert compressed.hint("ep_1").startswith("[codeoid: ls kept ")
    assert 'get_episode("ep_1")' in compressed.hint("ep_1")
    assert "Compressed(rule='ls'" in repr(compressed)


def test_compress_accepts_str_bytearray_and_invalid_utf8(memory: codeoid.Memory) -> None:
    assert memory.compress("ls -la", LONG_LS.decode()) == memory.compress("ls -la", LONG_LS)
    assert memory.compress("ls -la", bytearray(LONG_LS)) == memory.compress("ls -la", LONG_LS)
    assert memory.compress("echo hi", b"hi\n") is None, "short output passes through"
    assert memory.compress("cat x", b"\xff\xfe\x00" * 5000) is None or True
    with pytest.raises(TypeError, match="bytes or str"):
        memory.compress("ls", 42)  # type: ignore[arg-type]


def test_run_stores_the_raw_output_first(memory: codeoid.Memory, session: codeoid.Session) -> None:
    out = memory.run(session.id, "seq 1 5000; echo oops >&2; exit 3")
    assert out.exit_code == 3
    assert out.stderr == b"oops\n"
    assert out.store_error is None
    assert out.episode_id is not None
    assert out.compressed is not None
    assert f'get_episode("{out.episode_id}")' in out.stdout.decode()
    episode = memory.get_episode(out.episode_id)
    raw = b"".join(memory.blob(b.blob_id) for b in episode.blobs if b.role == "stdout")
    assert raw == "".join(f"{i}\n" for i in range(1, 5001)).encode()
    assert "RunOutput(exit_code=3" in repr(out)


def test_run_in_the_workspace_root(memory: codeoid.Memory, session: codeoid.Session) -> None:
    out = memory.run(session.id, "pwd")
    assert out.stdout.decode().strip() == memory.workspace_root
    assert out.compressed is None


def test_run_errors(memory: codeoid.Memory, session: codeoid.Session) -> None:
    with pytest.raises(codeoid.NotFoundError):
        memory.run("nope", "ls")
    with pytest.raises(codeoid.InvalidInputError):
        memory.run(session.id, "   ")


def test_a_run_returns_while_what_it_started_in_the_background_runs_on(
    memory: codeoid.Memory, session: codeoid.Session
) -> None:
    begin = time.monotonic()
    out = memory.run(session.id, "echo started; sleep 5 &")
    assert time.monotonic() - begin < 3
    assert out.left_running and not out.timed_out
    assert out.stdout.startswith(b"started\n")
    assert b"it was left running" in out.stdout
    assert not memory.run(session.id, "echo done").left_running


def test_a_run_past_its_timeout_is_killed(tmp_path: pathlib.Path, workspace: pathlib.Path) -> None:
    with codeoid.Memory(tmp_path / "t.db", workspace, embeddings=False, env=False, run_timeout=0.5) as m:
        session = m.start_session()
        begin = time.monotonic()
        out = m.run(session.id, "echo started; sleep 30 & sleep 30")
        assert time.monotonic() - begin < 10
        assert out.timed_out
        assert out.exit_code == 137
        assert out.stdout.startswith(b"started\n")
        assert b"timeout and was killed" in out.stdout
        assert not m.run(session.id, "true").timed_out
    with pytest.raises(codeoid.InvalidInputError, match="run_timeout"):
        codeoid.Memory(tmp_path / "t.db", workspace, env=False, run_timeout=-1)


@pytest.mark.parametrize("timeout", [None, 60.0])
def test_ctrl_c_kills_a_running_command_and_keeps_its_output(
    memory: codeoid.Memory, session: codeoid.Session, timeout: float | None, ctrl_c: Callable[[], None]
) -> None:
    timer = threading.Timer(0.5, ctrl_c)
    begin = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        memory.run(session.id, "echo started; sleep 30 & sleep 30", timeout=timeout)
    assert time.monotonic() - begin < 5
    timer.join()
    stored = [e for e in memory.timeline().episodes if e.kind == "tool_call"]
    assert stored and "sleep 30" in stored[0].summary
    episode = memory.get_episode(stored[0].id)
    assert b"".join(memory.blob(b.blob_id) for b in episode.blobs if b.role == "stdout") == b"started\n"


def test_a_run_s_own_timeout_replaces_the_memory_s(tmp_path: pathlib.Path, workspace: pathlib.Path) -> None:
    with codeoid.Memory(tmp_path / "t.db", workspace, embeddings=False, env=False, run_timeout=0.3) as m:
        session = m.start_session()
        for timeout in (60.0, 0):
            out = m.run(session.id, "sleep 1; echo finished", timeout=timeout)
            assert not out.timed_out, timeout
            assert out.stdout == b"finished\n"
        assert m.run(session.id, "sleep 1").timed_out
        for bad in (-1, float("nan"), float("inf"), 2e9):
            with pytest.raises(codeoid.InvalidInputError, match="timeout is"):
                m.run(session.id, "true", timeout=bad)
    with codeoid.Memory(tmp_path / "t2.db", workspace, embeddings=False, env=False) as m:
        session = m.start_session()
        begin = time.monotonic()
        out = m.run(session.id, "echo started; sleep 30", timeout=0.3)
        assert out.timed_out and out.stdout.startswith(b"started\n")
        assert time.monotonic() - begin < 10
