"""Importing other harnesses' logs, and forking sessions (optionally to another backend)."""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Callable
from typing import Any

import pytest

import codeoid
from helpers import assistant, call, result, user


def claude_code_log(path: pathlib.Path, session_id: str, cwd: pathlib.Path) -> pathlib.Path:
    """A small Claude Code transcript: a prompt, a Read call, its result, an answer."""

    def line(kind: str, uuid: str, message: dict[str, Any]) -> str:
        return json.dumps({
            "type": kind, "uuid": uuid, "sessionId": session_id, "cwd": str(cwd),
            "timestamp": "2026-01-05T10:00:00Z", "message": message,
        })

    lines = [
        line("user", "u1", {"role": "user", "content": "what does main do?"}),
        line("assistant", "a1", {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5",
             "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read",
                          "input": {"file_path": str(cwd / "src" / "main.rs")}}]}),
        line("user", "u2", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "fn main() {}"}]}),
        line("assistant", "a2", {"id": "msg_2", "role": "assistant", "model": "claude-sonnet-4-5",
             "content": [{"type": "text", "text": "Nothing yet."}]}),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_import_logs_is_idempotent(memory: codeoid.Memory, tmp_path: pathlib.Path, workspace: pathlib.Path) -> None:
    log = claude_code_log(tmp_path / "session.jsonl", "cc-1", workspace)
    progress: list[dict[str, Any]] = []
    summary = memory.import_logs(log, progress=progress.append)
    assert (summary.sessions_new, summary.turns_added) == (1, 4)
    assert summary.episodes_added >= 1 and summary.sessions_finished == 1
    assert summary.sessions_updated == summary.sessions_skipped == summary.sessions_empty == 0
    assert summary.turns_unchanged == summary.turns_replaced == summary.episodes_removed == 0
    assert progress and progress[-1]["files_done"] == progress[-1]["files_total"] == 1
    assert set(progress[-1]) == {"files_done", "files_total", "bytes_done", "bytes_total", "current"}
    as_dict = summary.to_dict()
    assert as_dict["report"]["files"] == 1 and as_dict["sessions_new"] == 1
    assert "ImportSummary(sessions_new=1" in repr(summary)
    session = memory.session("cc-1")
    assert session.turn_count == 4
    tools = [e for e in memory.timeline().episodes if e.kind == "tool_call"]
    assert tools[0].summary.startswith("Read(")
    again = memory.import_logs(log, finish_after=None)
    assert (again.sessions_new, again.turns_added, again.sessions_unchanged) == (0, 0, 1)


def test_import_summary_of_logs_whose_names_are_not_utf8(
    memory: codeoid.Memory, tmp_path: pathlib.Path, workspace: pathlib.Path
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    log = claude_code_log(logs / os.fsdecode(b"s\xff.jsonl"), "cc-5", workspace)
    with log.open("a") as f:
        f.write("this line is not JSON\n")
    summary = memory.import_logs(logs)
    assert summary.sessions_new == 1
    as_dict = summary.to_dict()
    assert as_dict is not None, "the summary serializes whatever the file names"
    malformed = as_dict["report"]["malformed"]
    assert len(malformed) == 1 and malformed[0]["path"].endswith("s\ufffd.jsonl")


def test_import_into_another_workspace(memory: codeoid.Memory, tmp_path: pathlib.Path, workspace: pathlib.Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    log = claude_code_log(tmp_path / "s.jsonl", "cc-2", workspace)
    memory.import_logs(log, workspace=other)
    with pytest.raises(codeoid.NotFoundError):
        memory.session("cc-2")
    with codeoid.Memory(memory.path, other, env=False) as there:
        assert there.session("cc-2").turn_count == 4


def test_import_errors(memory: codeoid.Memory, tmp_path: pathlib.Path) -> None:
    with pytest.raises(codeoid.NotFoundError):
        memory.import_logs(tmp_path / "missing.jsonl")
    junk = tmp_path / "junk.jsonl"
    junk.write_text("this is not a session log\n")
    with pytest.raises(codeoid.LogImportError):
        memory.import_logs(junk)
    with pytest.raises(codeoid.InvalidInputError, match="finish_after"):
        memory.import_logs(junk, finish_after=-1.0)


def three_logs(folder: pathlib.Path, workspace: pathlib.Path) -> list[str]:
    """A folder of three small Claude Code logs, read in the order of their session ids."""
    folder.mkdir()
    ids = ["cc-a", "cc-b", "cc-c"]
    for session_id in ids:
        claude_code_log(folder / f"{session_id}.jsonl", session_id, workspace)
    return ids


def stored(memory: codeoid.Memory, session_id: str) -> bool:
    try:
        memory.session(session_id)
    except codeoid.NotFoundError:
        return False
    return True


def test_a_failing_progress_callback_stops_the_import_and_is_reraised(
    memory: codeoid.Memory, tmp_path: pathlib.Path, workspace: pathlib.Path
) -> None:
    ids = three_logs(tmp_path / "logs", workspace)

    def boom(progress: dict[str, Any]) -> None:
        if progress["files_done"] == 1:
            raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        memory.import_logs(tmp_path / "logs", progress=boom)
    assert [stored(memory, i) for i in ids] == [True, False, False], "stopped before the next file"
    assert memory.session("cc-a").turn_count == 4, "the file read before is stored whole"
    again = memory.import_logs(tmp_path / "logs")
    assert (again.sessions_new, again.sessions_unchanged) == (2, 1)


def test_ctrl_c_stops_an_import_between_files(
    memory: codeoid.Memory, tmp_path: pathlib.Path, workspace: pathlib.Path, ctrl_c: Callable[[], None]
) -> None:
    ids = three_logs(tmp_path / "logs", workspace)

    def interrupt_after_the_first(progress: dict[str, Any]) -> None:
        if progress["files_done"] == 1:
            ctrl_c()

    with pytest.raises(KeyboardInterrupt):
        memory.import_logs(tmp_path / "logs", progress=interrupt_after_the_first)
    assert [stored(memory, i) for i in ids] == [True, False, False]
    assert memory.import_logs(tmp_path / "logs").sessions_new == 2


def test_fork_copies_the_conversation(memory: codeoid.Memory, session: codeoid.Session) -> None:
    memory.record_turns(session.id, [user("plan the port"), call("c1", "Read", {"file_path": "a.rs"}),
                                     result("c1", "A"), assistant("done")])
    forked = memory.fork(session.id, "try another way", at_turn=2, id="fork-1")
    assert forked.session.id == "fork-1" and forked.session.name == "try another way"
    assert forked.copied_turns == 3 and forked.handoff is None
    assert forked.lineage.parent_session_id == session.id and forked.lineage.at_turn == 2
    assert forked.lineage.kind == "fork" and forked.session.lineage == forked.lineage
    assert "Forked(session_id='fork-1'" in repr(forked) and "Lineage(kind='fork'" in repr(forked.lineage)
    assert len(memory.turns("fork-1")) == 3
    assert memory.session(session.id).turn_count == 4, "the parent is untouched"
    assert memory.get_episode(forked.episode_id).kind == "fork" or forked.episode_id


def test_fork_hands_off_to_another_backend(memory: codeoid.Memory, session: codeoid.Session) -> None:
    memory.record_turns(session.id, [user("plan the port"), call("c1", "Read", {"file_path": "a.rs"}),
                                     result("c1", "A"), assistant("done")])
    forked = memory.fork(session.id, "on gemini", format="gemini", model="gemini-2.5-pro",
                         options={"budget_tokens": 100_000})
    handoff = forked.handoff
    assert handoff is not None
    assert (handoff.format, handoff.provider, handoff.model) == ("gemini", "gemini", "gemini-2.5-pro")
    assert handoff.context_window > 0 and handoff.budget_tokens == 100_000 and handoff.fits
    assert handoff.omitted_turns == 0 and handoff.seed is None
    assert [c["role"] for c in handoff.messages] == ["user", "model", "user", "model"]
    assert len(handoff.turns) == 4 and isinstance(handoff.losses, list)
    assert "Handoff(format='gemini'" in repr(handoff)


def test_fork_errors(memory: codeoid.Memory, session: codeoid.Session) -> None:
    with pytest.raises(codeoid.InvalidInputError):
        memory.fork(session.id, "empty parent")
    memory.record_turn(session.id, user("x"))
    with pytest.raises(codeoid.InvalidInputError, match="name"):
        memory.fork(session.id, "  ")
    with pytest.raises(codeoid.InvalidInputError):
        memory.fork(session.id, "too far", at_turn=9)
    with pytest.raises(codeoid.NotFoundError):
        memory.fork("nope", "x")
    with pytest.raises(codeoid.InvalidInputError, match="no option"):
        memory.fork(session.id, "x", format="anthropic", options={"budget": 1})
