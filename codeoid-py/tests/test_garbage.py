"""Garbage through every entry point: always TypeError, ValueError or a codeoid error with a
message, never a crash, a panic or a bare Exception."""

from __future__ import annotations

import math
import pathlib
from collections.abc import Callable
from typing import Any

import pytest

import codeoid
from helpers import user


class Opaque:
    """An object no conversion knows."""


def self_referential() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


def deep(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"x": [value]}
    return value


GARBAGE: list[Any] = [
    None, 0, -1, 2**70, -(2**70), 1.5, math.nan, math.inf, True, "", " ", "\x00", "\ud800",
    "x" * 100_000, b"", b"\xff\xfe\xfd", bytearray(b"\x80"), [], [None], {}, {"role": None},
    {"role": "user"}, {"role": "user", "parts": None}, {"role": "user", "parts": [None]},
    {"role": "user", "parts": [{"type": "nope"}]}, {"role": "assistant", "parts": [{"type": "tool_call"}]},
    {"role": "user", "parts": [{"type": "tool_result", "call_id": "", "parts": []}]},
    {"role": "user", "parts": [{"type": "text", "text": b"bytes"}]},
    {"role": "user", "parts": [{"type": "text", "text": "\ud800"}]},
    {1: "int key"}, {"role": "user", "parts": [], "extra": 1}, self_referential(), deep(500),
    Opaque(), object, (1, 2), {"a", "b"}, pathlib.Path("/nonexistent"),
]

ALLOWED = (TypeError, ValueError, codeoid.CodeoidError)


def entry_points(memory: codeoid.Memory, session_id: str) -> dict[str, Callable[[Any], object]]:
    """Every public entry point, with the garbage in one argument and sane values elsewhere."""
    return {
        "Memory.path": lambda g: codeoid.Memory(g, env=False).close(),
        "Memory.workspace": lambda g: codeoid.Memory(":memory:", g, env=False).close(),
        "Memory.tenant": lambda g: codeoid.Memory(":memory:", ".", tenant=g, env=False).close(),
        "Memory.context_window": lambda g: codeoid.Memory(":memory:", ".", context_window=g, env=False).close(),
        "Memory.soft_threshold": lambda g: codeoid.Memory(":memory:", ".", soft_threshold=g, env=False).close(),
        "Memory.busy_timeout": lambda g: codeoid.Memory(":memory:", ".", busy_timeout=g, env=False).close(),
        "Memory.min_turns": lambda g: codeoid.Memory(":memory:", ".", min_turns=g, env=False).close(),
        "Memory.env": lambda g: codeoid.Memory(":memory:", ".", env=g).close(),
        "start_session.id": lambda g: memory.start_session(g),
        "start_session.name": lambda g: memory.start_session(name=g),
        "start_session.created_at": lambda g: memory.start_session(created_at=g),
        "session": lambda g: memory.session(g),
        "finish_session": lambda g: memory.finish_session(g),
        "record_turn.session_id": lambda g: memory.record_turn(g, user("x")),
        "record_turn.turn": lambda g: memory.record_turn(session_id, g),
        "record_turn.anthropic": lambda g: memory.record_turn(session_id, g, format="anthropic"),
        "record_turn.openai_chat": lambda g: memory.record_turn(session_id, g, format="openai_chat"),
        "record_turn.openai_responses": lambda g: memory.record_turn(session_id, g, format="openai_responses"),
        "record_turn.gemini": lambda g: memory.record_turn(session_id, g, format="gemini"),
        "record_turn.format": lambda g: memory.record_turn(session_id, user("x"), format=g),
        "record_turn.usage": lambda g: memory.record_turn(session_id, user("x"), usage=g),
        "record_turns": lambda g: memory.record_turns(session_id, g),
        "record_turns.list": lambda g: memory.record_turns(session_id, [g]),
        "record_turns.gemini": lambda g: memory.record_turns(session_id, g, format="gemini"),
        "turns.start": lambda g: memory.turns(session_id, g),
        "get_episode": lambda g: memory.get_episode(g),
        "episode_text": lambda g: memory.episode_text(g),
        "timeline.limit": lambda g: memory.timeline(limit=g),
        "timeline.offset": lambda g: memory.timeline(offset=g),
        "timeline.before": lambda g: memory.timeline(before=g),
        "timeline_text": lambda g: memory.timeline_text(g),
        "blob": lambda g: memory.blob(g),
        "recall.query": lambda g: memory.recall(g),
        "recall.session": lambda g: memory.recall("x", session=g),
        "recall.limit": lambda g: memory.recall("x", limit=g),
        "recall.only_session": lambda g: memory.recall("x", only_session=g),
        "recall.tool_name": lambda g: memory.recall("x", tool_name=g),
        "recall.since": lambda g: memory.recall("x", since=g),
        "recall.paths": lambda g: memory.recall("x", paths=g),
        "recall.paths.item": lambda g: memory.recall("x", paths=[g]),
        "recall_file": lambda g: memory.recall_file(g),
        "flush": lambda g: memory.flush(g),
        "call_tool.name": lambda g: memory.call_tool(g, {}),
        "call_tool.arguments": lambda g: memory.call_tool("recall", g),
        "call_tool.recall": lambda g: memory.call_tool("recall", {"query": g, "limit": g}),
        "call_tool.session": lambda g: memory.call_tool("timeline", {}, session=g),
        "tool_schemas": lambda g: memory.tool_schemas(g),
        "tool_declarations.format": lambda g: memory.tool_declarations(g),
        "tool_declarations.options": lambda g: memory.tool_declarations("gemini", options=g),
        "declare_tools": lambda g: codeoid.declare_tools(g, "anthropic"),
        "Memory.model_dir": lambda g: codeoid.Memory(":memory:", ".", model_dir=g, env=False).close(),
        "Memory.embeddings": lambda g: codeoid.Memory(":memory:", ".", embeddings=g, env=False).close(),
        "workspace_index": lambda g: memory.workspace_index(g),
        "rotation_decision": lambda g: memory.rotation_decision(g),
        "rotate": lambda g: memory.rotate(g),
        "rotate.backing": lambda g: memory.rotate(session_id, backing_context_id=g),
        "take_seed": lambda g: memory.take_seed(g),
        "set_context_window": lambda g: memory.set_context_window(session_id, g),
        "compress.command": lambda g: memory.compress(g, b"x" * 5000),
        "compress.stdout": lambda g: memory.compress("ls -la", g),
        "run.command": lambda g: memory.run(session_id, g) if not isinstance(g, str) else None,
        "import_logs": lambda g: memory.import_logs(g),
        "import_logs.progress": lambda g: memory.import_logs("/nonexistent", progress=g),
        "fork.name": lambda g: memory.fork(session_id, g),
        "fork.at_turn": lambda g: memory.fork(session_id, "f", at_turn=g),
        "fork.options": lambda g: memory.fork(session_id, "f", format="anthropic", options=g),
        "to_messages": lambda g: codeoid.to_messages(g, "anthropic"),
        "to_messages.item": lambda g: codeoid.to_messages([g], "anthropic"),
        "to_messages.format": lambda g: codeoid.to_messages([user("x")], g),
        "to_messages.options": lambda g: codeoid.to_messages([user("x")], "anthropic", options=g),
        "from_messages.anthropic": lambda g: codeoid.from_messages(g, "anthropic"),
        "from_messages.openai_chat": lambda g: codeoid.from_messages([g], "openai_chat"),
        "from_messages.openai_responses": lambda g: codeoid.from_messages(g, "openai_responses"),
        "from_messages.gemini": lambda g: codeoid.from_messages([g], "gemini"),
        "error_raise": lambda g: codeoid._codeoid._raise_error(g, "m"),
    }


def test_garbage_never_crashes(memory: codeoid.Memory, session: codeoid.Session,
                               monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    monkeypatch.chdir(tmp_path)
    memory.record_turn(session.id, user("a prompt to fork from"))
    unexpected = []
    for name, entry in entry_points(memory, session.id).items():
        for garbage in GARBAGE:
            try:
                entry(garbage)
            except ALLOWED as err:
                message = str(err)
                if not message:
                    unexpected.append(f"{name}({garbage!r:.40}): {type(err).__name__} without a message")
            except BaseException as err:
                unexpected.append(f"{name}({garbage!r:.40}): {type(err).__module__}.{type(err).__name__}: {err}")
    assert unexpected == []


def test_precise_messages_for_common_mistakes(memory: codeoid.Memory, session: codeoid.Session) -> None:
    with pytest.raises(TypeError, match=r"turn\['parts'\]\[0\]\['text'\] is bytes.*decode"):
        memory.record_turn(session.id, {"role": "user", "parts": [{"type": "text", "text": b"x"}]})
    with pytest.raises(codeoid.InvalidInputError, match=r"turn\['parts'\]\[0\]: missing field `call_id`"):
        memory.record_turn(session.id, {"role": "user", "parts": [{"type": "tool_result", "parts": []}]})
    with pytest.raises(codeoid.InvalidInputError, match="missing field `role`"):
        memory.record_turn(session.id, {"parts": []})
    with pytest.raises(codeoid.InvalidInputError, match=r"turn\['parts'\]\[0\]\['text'\] is not valid Unicode"):
        memory.record_turn(session.id, {"role": "user", "parts": [{"type": "text", "text": "\ud800"}]})
    with pytest.raises(codeoid.InvalidInputError, match="nested deeper than 128"):
        memory.record_turn(session.id, {"role": "user", "parts": [], "meta": deep(200)})
    with pytest.raises(codeoid.InvalidInputError, match="NaN"):
        memory.record_turn(session.id, {"role": "user", "parts": [], "meta": {"x": math.nan}})
    with pytest.raises(codeoid.InvalidInputError, match="64-bit"):
        memory.record_turn(session.id, {"role": "user", "parts": [], "meta": {"x": 2**70}})
    with pytest.raises(TypeError, match="key of type int"):
        memory.record_turn(session.id, {"role": "user", "parts": [], "meta": {1: 2}})
    with pytest.raises(TypeError, match="expected a dict"):
        memory.record_turn(session.id, "hello")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        memory.get_episode(42)  # type: ignore[arg-type]
    with pytest.raises(codeoid.InvalidInputError, match="-1 is out of range") as info:
        memory.timeline(limit=-1)
    assert "while processing 'limit'" in info.value.__notes__[0]
    assert "expected a non-negative integer" in str(info.value)
    with pytest.raises(TypeError, match="non-negative int, got str"):
        memory.timeline(limit="3")  # type: ignore[arg-type]
    with pytest.raises(codeoid.InvalidInputError, match="usage: "):
        memory.record_turn(session.id, user("x"), usage={"input_tokens": -5})
    with pytest.raises(codeoid.InvalidInputError, match="messages\\[0\\]"):
        codeoid.from_messages([{"role": 3}], "anthropic")
    assert memory.session(session.id).turn_count == 0


def test_a_panic_becomes_internal_error_not_panic_exception() -> None:
    # The boundary every core call goes through, exercised with a deliberate panic.
    with pytest.raises(codeoid.InternalError, match="codeoid panicked: deliberate; this is a bug") as info:
        codeoid._codeoid._panic("deliberate")
    assert isinstance(info.value, Exception), "catchable by `except Exception`"
