"""Starting, finding, listing and finishing sessions."""

from __future__ import annotations

import datetime

import pytest

import codeoid
from helpers import call, user


def test_start_session_fills_every_field(memory: codeoid.Memory) -> None:
    at = datetime.datetime(2026, 1, 5, 10, 0, tzinfo=datetime.timezone.utc)
    s = memory.start_session(
        "s-1", name="port parser", provider="anthropic", model="claude-sonnet-4-5",
        backing_context_id="ctx_1", created_at=at,
    )
    assert (s.id, s.name, s.provider, s.model) == ("s-1", "port parser", "anthropic", "claude-sonnet-4-5")
    assert s.workspace_id == memory.workspace_id
    assert s.root == memory.workspace_root
    assert s.created_at == at
    assert s.backing_context_id == "ctx_1"
    assert s.lineage is None
    assert (s.rotation_count, s.turn_count) == (0, 0)
    assert s.last_rotation_at is None and s.finished_at is None and s.first_intent is None
    assert isinstance(s.last_activity_at, datetime.datetime)
    assert "Session(id='s-1'" in repr(s)


def test_fresh_ids_and_idempotent_start(memory: codeoid.Memory) -> None:
    a = memory.start_session()
    b = memory.start_session()
    assert a.id != b.id
    assert memory.start_session(a.id) == memory.session(a.id)


def test_sessions_lists_oldest_first_and_counts_turns(memory: codeoid.Memory) -> None:
    first = memory.start_session("first")
    memory.start_session("second")
    memory.record_turn(first.id, user("fix the build"))
    sessions = memory.sessions()
    assert [s.id for s in sessions] == ["first", "second"]
    assert sessions[0].turn_count == 1
    assert sessions[0].first_intent == "fix the build"


def test_unknown_and_empty_ids(memory: codeoid.Memory) -> None:
    with pytest.raises(codeoid.NotFoundError, match="nope"):
        memory.session("nope")
    with pytest.raises(codeoid.InvalidInputError):
        memory.start_session("")
    with pytest.raises(codeoid.InvalidInputError):
        memory.start_session("   ")


def test_an_id_of_another_workspace_already_exists(
    memory: codeoid.Memory, tmp_path: pytest.TempPathFactory
) -> None:
    other_dir = memory.workspace_root + "-other"
    import os

    os.makedirs(other_dir)
    memory.start_session("shared-id")
    with codeoid.Memory(memory.path, other_dir, env=False) as other:
        with pytest.raises(codeoid.AlreadyExistsError):
            other.start_session("shared-id")
        with pytest.raises(codeoid.NotFoundError):
            other.session("shared-id")


def test_finish_session_cancels_pending_calls(memory: codeoid.Memory, session: codeoid.Session) -> None:
    memory.record_turn(session.id, user("list files"))
    memory.record_turn(session.id, call("c1", "Bash", {"command": "ls"}))
    written = memory.finish_session(session.id)
    assert len(written) == 1
    episode = memory.get_episode(written[0])
    assert (episode.kind, episode.status, episode.tool_name) == ("tool_call", "cancelled", "Bash")
    assert memory.session(session.id).finished_at is not None
    with pytest.raises(codeoid.NotFoundError):
        memory.finish_session("nope")


def test_created_at_in_any_timezone_is_the_same_instant(memory: codeoid.Memory) -> None:
    at = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=-5)))
    session = memory.start_session(created_at=at)
    assert session.created_at == at
    assert session.created_at.utcoffset() == datetime.timedelta(0)
    with pytest.raises(TypeError, match="no timezone"):
        memory.start_session(created_at=datetime.datetime(2026, 3, 1, 12, 0))
