"""Builders of canonical turns for the tests."""

from __future__ import annotations

from typing import Any

import codeoid


def user(text: str, **extra: Any) -> dict[str, Any]:
    """A canonical user turn with one text part."""
    return {"role": "user", "parts": [{"type": "text", "text": text}], **extra}


def assistant(text: str, **extra: Any) -> dict[str, Any]:
    """A canonical assistant turn with one text part."""
    return {"role": "assistant", "parts": [{"type": "text", "text": text}], **extra}


def call(call_id: str, name: str, input: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A canonical assistant turn holding one tool call."""
    part = {"type": "tool_call", "id": call_id, "name": name, "input": input}
    return {"role": "assistant", "parts": [part], **extra}


def result(call_id: str, text: str, *, is_error: bool = False) -> dict[str, Any]:
    """A canonical user turn holding one tool result."""
    part = {
        "type": "tool_result",
        "call_id": call_id,
        "parts": [{"type": "text", "text": text}],
        "is_error": is_error,
    }
    return {"role": "user", "parts": [part]}


def read_file_exchange(
    memory: codeoid.Memory, session_id: str, path: str = "src/main.rs", content: str = "fn main() {}"
) -> str:
    """Records a prompt, a Read call and its result; returns the tool episode's id."""
    call_id = "call_" + "".join(c if c.isalnum() else "_" for c in path)
    memory.record_turn(session_id, user(f"please look at {path}"))
    memory.record_turn(session_id, call(call_id, "Read", {"file_path": path}))
    outcome = memory.record_turn(session_id, result(call_id, content))
    assert len(outcome.episode_ids) == 1
    return outcome.episode_ids[0]
