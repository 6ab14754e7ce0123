"""Rotation: the policy's decision, rotations from record_turn and by hand, seeds, windows."""

from __future__ import annotations

import pathlib

import pytest

import codeoid
from helpers import assistant, user

WINDOW = 10_000


@pytest.fixture
def small(tmp_path: pathlib.Path, workspace: pathlib.Path) -> codeoid.Memory:
    """A memory whose sessions all have a 10k-token window, rotating after 2 turns."""
    return codeoid.Memory(tmp_path / "r.db", workspace, context_window=WINDOW, min_turns=2, env=False)


def test_no_assistant_turn_means_no_signal(memory: codeoid.Memory, session: codeoid.Session) -> None:
    decision = memory.rotation_decision(session.id)
    assert (decision.should_rotate, decision.reason) == (False, "no_signal")
    assert decision.occupancy is None and decision.tokens is None
    assert decision.window == 128_000 and decision.window_source == "default"
    assert decision.min_turns == 5 and not decision.auto_rotate
    assert "RotationDecision(should_rotate=False" in repr(decision)
    assert decision.message


def test_the_hard_threshold_rotates_from_record_turn(small: codeoid.Memory) -> None:
    with small:
        s = small.start_session(name="long run")
        small.record_turn(s.id, user("port the parser to nom"))
        first = small.record_turn(s.id, assistant("on it"), usage={"input_tokens": 9_800})
        assert first.decision is not None and first.decision.reason == "too_soon"
        assert first.rotation is None
        second = small.record_turn(s.id, assistant("still going"), usage={"input_tokens": 9_900})
        assert second.decision is not None and second.decision.should_rotate
        assert second.decision.reason == "hard_threshold" and second.decision.window_source == "override"
        rotation = second.rotation
        assert rotation is not None and rotation.count == 1
        assert rotation.backing_context_id.startswith("ctx_")
        assert rotation.seed.kind == "memory" and rotation.seed.rotation == 1
        assert "<rotation_context>" in rotation.seed.text
        assert "port the parser to nom" in rotation.seed.text
        assert str(rotation.seed) == rotation.seed.text
        assert "Rotation(count=1" in repr(rotation) and "Seed(rotation=1" in repr(rotation.seed)
        # The seed is handed out exactly once.
        seed = small.take_seed(s.id)
        assert seed is not None and seed == rotation.seed
        assert small.take_seed(s.id) is None
        session = small.session(s.id)
        assert session.rotation_count == 1 and session.last_rotation_at is not None
        # The store keeps milliseconds; the outcome carries the clock's full precision.
        assert abs((session.last_rotation_at - rotation.at).total_seconds()) < 0.001
        assert session.backing_context_id == rotation.backing_context_id
        kinds = [e.kind for e in small.timeline().episodes]
        assert "rotation" in kinds


def test_auto_rotation_uses_the_soft_threshold(tmp_path: pathlib.Path, workspace: pathlib.Path) -> None:
    with codeoid.Memory(
        tmp_path / "a.db", workspace, context_window=WINDOW, min_turns=1, auto_rotate=True, env=False
    ) as memory:
        s = memory.start_session()
        memory.record_turn(s.id, user("go"))
        out = memory.record_turn(s.id, assistant("ok"), usage={"input_tokens": 9_200})
        assert out.decision is not None and out.decision.reason == "soft_threshold"
        assert out.rotation is not None


def test_manual_rotation_respects_the_guard(small: codeoid.Memory) -> None:
    with small:
        s = small.start_session()
        small.record_turn(s.id, user("first prompt"))
        with pytest.raises(codeoid.RotationRefusedError) as info:
            small.rotate(s.id)
        assert info.value.code == codeoid.RotationRefusedError.code
        small.record_turn(s.id, assistant("a"))
        small.record_turn(s.id, assistant("b"))
        rotation = small.rotate(s.id, backing_context_id="ctx_mine")
        assert rotation.backing_context_id == "ctx_mine"
        assert small.rotation_decision(s.id).turns_since_rotation <= 1


def test_memory_disabled_gives_the_generic_seed(tmp_path: pathlib.Path, workspace: pathlib.Path) -> None:
    with codeoid.Memory(
        tmp_path / "a.db", workspace, memory_enabled=False, min_turns=1, env=False
    ) as memory:
        s = memory.start_session()
        memory.record_turn(s.id, user("hi"))
        memory.record_turn(s.id, assistant("hello"))
        rotation = memory.rotate(s.id)
        assert rotation.seed.kind == "generic"
        assert memory.workspace_index(s.id) == ""


def test_set_context_window_overrides_the_model_table(memory: codeoid.Memory, session: codeoid.Session) -> None:
    memory.record_turn(session.id, user("hi"))
    memory.record_turn(session.id, assistant("x"), model="claude-sonnet-4-5", usage={"input_tokens": 50_000})
    assert memory.rotation_decision(session.id).window == 200_000
    memory.set_context_window(session.id, 100_000)
    decision = memory.rotation_decision(session.id)
    assert decision.window == 100_000 and decision.occupancy == pytest.approx(0.5)
    memory.set_context_window(session.id, None)
    assert memory.rotation_decision(session.id).window == 200_000
    with pytest.raises(codeoid.InvalidInputError):
        memory.set_context_window(session.id, 0)
    with pytest.raises(codeoid.NotFoundError):
        memory.set_context_window("nope", 100_000)


def test_workspace_index_lists_hot_files_and_the_tools(memory: codeoid.Memory, session: codeoid.Session) -> None:
    assert memory.workspace_index(session.id) == ""
    from helpers import read_file_exchange

    read_file_exchange(memory, session.id)
    memory.finish_session(session.id)
    index = memory.workspace_index()
    assert index.startswith("# Memory Index — project")
    assert "src/main.rs" in index
    assert '`recall("<topic>")`' in index
    with pytest.raises(codeoid.NotFoundError):
        memory.workspace_index("nope")
