"""Recording turns: canonical dicts, provider messages through the translators, usage, bulk."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

import codeoid
from helpers import assistant, call, result, user

READ_INPUT = {"file_path": "src/main.rs"}

# One exchange per provider: the user's prompt, the model's tool call, the tool's result, the
# model's answer, each as that provider's API takes it.
EXCHANGES: dict[str, list[dict[str, Any]]] = {
    "anthropic": [
        {"role": "user", "content": "look at src/main.rs"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": READ_INPUT},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": "fn main() {}"},
        ]},
        {"role": "assistant", "content": [{"type": "text", "text": "It is empty."}]},
    ],
    "openai_chat": [
        {"role": "user", "content": "look at src/main.rs"},
        {"role": "assistant", "content": "Reading it.", "tool_calls": [
            {"id": "call_01", "type": "function",
             "function": {"name": "Read", "arguments": json.dumps(READ_INPUT)}},
        ]},
        {"role": "tool", "tool_call_id": "call_01", "content": "fn main() {}"},
        {"role": "assistant", "content": "It is empty."},
    ],
    "openai_responses": [
        {"role": "user", "content": "look at src/main.rs"},
        {"type": "function_call", "call_id": "call_01", "name": "Read",
         "arguments": json.dumps(READ_INPUT)},
        {"type": "function_call_output", "call_id": "call_01", "output": "fn main() {}"},
        {"role": "assistant", "content": "It is empty."},
    ],
    "gemini": [
        {"role": "user", "parts": [{"text": "look at src/main.rs"}]},
        {"role": "model", "parts": [
            {"text": "Reading it."}, {"functionCall": {"name": "Read", "args": READ_INPUT}},
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "Read", "response": {"output": "fn main() {}"}}},
        ]},
        {"role": "model", "parts": [{"text": "It is empty."}]},
    ],
}


def test_canonical_turns_make_episodes(memory: codeoid.Memory, session: codeoid.Session) -> None:
    first = memory.record_turn(session.id, user("look at src/main.rs", id="u1"))
    assert (first.turn_id, first.seq, first.duplicate, first.episode_ids) == ("u1", 0, False, [])
    assert first.decision is None and first.rotation is None and first.rotation_refused is None
    second = memory.record_turn(session.id, call("c1", "Read", READ_INPUT))
    assert second.decision is not None and second.decision.reason == "no_signal"
    third = memory.record_turn(session.id, result("c1", "fn main() {}"))
    [episode_id] = third.episode_ids
    assert memory.get_episode(episode_id).summary == "Read(src/main.rs)"
    assert "TurnOutcome(" in repr(third)


def test_a_known_turn_id_is_a_no_op(memory: codeoid.Memory, session: codeoid.Session) -> None:
    memory.record_turn(session.id, user("hello", id="u1"))
    again = memory.record_turn(session.id, user("hello", id="u1"))
    assert again.duplicate
    assert memory.session(session.id).turn_count == 1


@pytest.mark.parametrize("fmt", list(EXCHANGES))
def test_provider_messages_one_at_a_time(memory: codeoid.Memory, fmt: str) -> None:
    session = memory.start_session(name=fmt)
    episode_ids: list[str] = []
    for message in EXCHANGES[fmt]:
        outcome = memory.record_turn(session.id, message, format=fmt, model="some-model")
        episode_ids += outcome.episode_ids
    memory.finish_session(session.id)
    tool = memory.get_episode(episode_ids[-1] if len(episode_ids) == 1 else episode_ids[1])
    episodes = [memory.get_episode(e) for e in episode_ids] + [
        memory.get_episode(h.id) for h in memory.timeline(limit=20).episodes
    ]
    tools = [e for e in episodes if e.kind == "tool_call"]
    assert tools, f"{fmt}: no tool episode in {episodes}"
    tool = tools[0]
    assert tool.summary == "Read(src/main.rs)"
    assert tool.status == "ok"
    assert "## Result\nfn main() {}" in tool.content
    assert "# User intent\nlook at src/main.rs" in tool.content
    turns = memory.turns(session.id)
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant"]
    assert turns[1]["model"] == "some-model"


def test_gemini_calls_without_ids_stay_unique_and_pair_by_name(
    memory: codeoid.Memory, session: codeoid.Session
) -> None:
    memory.record_turn(session.id, {"role": "user", "parts": [{"text": "read two files"}]}, format="gemini")
    for path, content in [("a.rs", "A"), ("b.rs", "B")]:
        memory.record_turn(session.id, {"role": "model", "parts": [
            {"functionCall": {"name": "Read", "args": {"file_path": path}}}]}, format="gemini")
        out = memory.record_turn(session.id, {"role": "user", "parts": [
            {"functionResponse": {"name": "Read", "response": {"output": content}}}]}, format="gemini")
        [episode_id] = out.episode_ids
        episode = memory.get_episode(episode_id)
        assert episode.summary == f"Read({path})"
        assert episode.content.endswith(f"## Result\n{content}")
    ids = [p["id"] for t in memory.turns(session.id) for p in t["parts"] if p["type"] == "tool_call"]
    assert len(set(ids)) == 2, ids


def gemini_exchange(path: str) -> list[dict[str, Any]]:
    """A prompt, a call without an id, and its response without an id, as Gemini sends them."""
    return [
        {"role": "user", "parts": [{"text": f"read {path}"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "Read", "args": {"file_path": path}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "Read", "response": {"output": path}}}]},
    ]


def test_gemini_message_lists_number_calls_without_ids_uniquely_across_calls(
    memory: codeoid.Memory, session: codeoid.Session
) -> None:
    memory.record_turns(session.id, gemini_exchange("a.rs"), format="gemini")
    memory.record_turn(session.id, gemini_exchange("b.rs")[1], format="gemini")
    memory.record_turn(session.id, gemini_exchange("b.rs")[2], format="gemini")
    memory.record_turns(session.id, gemini_exchange("c.rs"), format="gemini")
    given = gemini_exchange("d.rs")
    given[1]["parts"][0]["functionCall"]["id"] = "gemini_call_7_0"
    given[2]["parts"][0]["functionResponse"]["id"] = "gemini_call_7_0"
    memory.record_turns(session.id, given, format="gemini")
    turns = memory.turns(session.id)
    calls = [p["id"] for t in turns for p in t["parts"] if p["type"] == "tool_call"]
    results = [p["call_id"] for t in turns for p in t["parts"] if p["type"] == "tool_result"]
    assert len(set(calls)) == 4, calls
    assert results == calls, "each response keeps its call's id"
    assert calls[3] == "gemini_call_7_0", "an id the message carries is kept"
    # A session whose ids repeat cannot be translated or forked; this one can.
    assert codeoid.to_messages(turns, "anthropic")["messages"]
    memory.fork(session.id, "on claude", format="anthropic")


def test_gemini_calls_recorded_from_threads_get_distinct_ids(
    memory: codeoid.Memory, session: codeoid.Session
) -> None:
    memory.record_turn(session.id, {"role": "user", "parts": [{"text": "go"}]}, format="gemini")

    def record(i: int) -> None:
        for j in range(25):
            memory.record_turn(session.id, {"role": "model", "parts": [
                {"functionCall": {"name": "Read", "args": {"file_path": f"{i}/{j}.rs"}}}]}, format="gemini")

    threads = [threading.Thread(target=record, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    calls = [p["id"] for t in memory.turns(session.id) for p in t["parts"] if p["type"] == "tool_call"]
    assert len(calls) == 200
    assert len(set(calls)) == 200, sorted(calls)


def test_usage_is_recorded_and_drives_the_decision(memory: codeoid.Memory, session: codeoid.Session) -> None:
    memory.record_turn(session.id, user("hi"))
    out = memory.record_turn(
        session.id, assistant("hello"), model="claude-sonnet-4-5",
        usage={"input_tokens": 1000, "output_tokens": 10, "cache_read_tokens": 9000},
    )
    assert out.decision is not None
    assert out.decision.tokens == 10_000
    assert out.decision.window == 200_000
    assert out.decision.occupancy == pytest.approx(0.05)
    turn = memory.turns(session.id)[1]
    assert turn["usage"]["calls"][0]["cache_read_tokens"] == 9000
    assert turn["model"] == "claude-sonnet-4-5"
    memory.record_turn(session.id, assistant("more"), usage={"calls": [{"input_tokens": 5, "primary": False}]})


def test_provider_usage_objects_count_cached_input_once(memory: codeoid.Memory, session: codeoid.Session) -> None:
    memory.record_turn(session.id, user("hi"))
    # OpenAI counts cached tokens inside prompt_tokens; Gemini inside promptTokenCount.
    chat_usage = {"prompt_tokens": 10_010, "completion_tokens": 5, "total_tokens": 10_015,
                  "prompt_tokens_details": {"cached_tokens": 10_000}}
    out = memory.record_turn(session.id, {"role": "assistant", "content": "ok"}, format="openai_chat",
                             model="gpt-5", usage=chat_usage)
    assert out.decision is not None and out.decision.tokens == 10_010
    gemini_usage = {"promptTokenCount": 20_010, "cachedContentTokenCount": 20_000,
                    "candidatesTokenCount": 4, "thoughtsTokenCount": 6}
    out = memory.record_turn(session.id, {"role": "model", "parts": [{"text": "ok"}]}, format="gemini",
                             model="gemini-2.5-pro", usage=gemini_usage)
    assert out.decision is not None and out.decision.tokens == 20_010
    # The whole Anthropic response brings its usage along.
    response = {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "done"}],
                "usage": {"input_tokens": 12, "output_tokens": 30, "cache_read_input_tokens": 30_000}}
    out = memory.record_turn(session.id, response, format="anthropic", model="claude-sonnet-4-5")
    assert out.decision is not None and out.decision.tokens == 30_012
    calls = [t["usage"]["calls"][0] for t in memory.turns(session.id) if t.get("usage")]
    assert [(c.get("input_tokens", 0), c.get("cache_read_tokens", 0), c.get("output_tokens", 0)) for c in calls] == [
        (10, 10_000, 5), (10, 20_000, 10), (12, 30_000, 30)]
    # Another provider's usage object is an error naming both shapes.
    with pytest.raises(codeoid.InvalidInputError, match="nor anthropic's own usage object"):
        memory.record_turn(session.id, assistant("x"), format="anthropic", usage={"promptTokenCount": 5})


def test_record_turns_in_bulk(memory: codeoid.Memory, session: codeoid.Session) -> None:
    recorded = memory.record_turns(session.id, [user("q"), call("c1", "Bash", {"command": "ls"}), result("c1", "a\nb")])
    assert [r.seq for r in recorded] == [0, 1, 2]
    assert len(recorded[2].episode_ids) == 1
    assert "Recorded(" in repr(recorded[0])
    with pytest.raises(codeoid.InvalidInputError, match=r"turns\[1\]"):
        memory.record_turns(session.id, [user("ok"), {"role": "user"}])
    assert memory.session(session.id).turn_count == 3, "nothing written for an invalid batch"


@pytest.mark.parametrize("fmt", list(EXCHANGES))
def test_record_turns_from_a_provider_message_list(memory: codeoid.Memory, fmt: str) -> None:
    session = memory.start_session()
    recorded = memory.record_turns(session.id, EXCHANGES[fmt], format=fmt)
    assert len(recorded) == 4
    assert sum(len(r.episode_ids) for r in recorded) >= 1


def test_turns_reads_back_canonical_dicts(memory: codeoid.Memory, session: codeoid.Session) -> None:
    memory.record_turns(session.id, [user("a"), assistant("b"), user("c")])
    assert [t["parts"][0]["text"] for t in memory.turns(session.id)] == ["a", "b", "c"]
    assert [t["parts"][0]["text"] for t in memory.turns(session.id, 1, 2)] == ["b"]
    assert memory.turns(session.id, 5) == []
    with pytest.raises(codeoid.NotFoundError):
        memory.turns("nope")


def test_translation_round_trip_functions() -> None:
    turns = [user("hi"), call("c1", "Read", READ_INPUT), result("c1", "x")]
    out = codeoid.to_messages(turns, "anthropic")
    assert out["losses"] == []
    assert out["messages"][1]["content"][0]["type"] == "tool_use"
    back = codeoid.from_messages(out["messages"], "anthropic", model="claude-x")
    assert back["system"] is None and back["losses"] == []
    assert [t["role"] for t in back["turns"]] == ["user", "assistant", "user"]
    chat = codeoid.from_messages(
        [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}], "openai_chat"
    )
    assert chat["system"] == "be brief"
    lossy = codeoid.to_messages([{"role": "user", "parts": [{"type": "error", "message": "api down"}]}], "gemini")
    assert lossy["losses"] and lossy["losses"][0]["kind"] == "dropped"
    with pytest.raises(codeoid.TranslationError):
        codeoid.to_messages(
            [{"role": "user", "parts": [{"type": "error", "message": "x"}]}], "gemini", options={"strict": True}
        )
    with pytest.raises(codeoid.InvalidInputError, match="unknown translation format"):
        codeoid.to_messages(turns, "openai")
    with pytest.raises(codeoid.InvalidInputError, match="options"):
        codeoid.to_messages(turns, "anthropic", options={"no_such_option": 1})


def test_one_provider_message_must_be_a_dict(memory: codeoid.Memory, session: codeoid.Session) -> None:
    with pytest.raises(TypeError, match="one provider message as a dict"):
        memory.record_turn(session.id, EXCHANGES["anthropic"], format="anthropic")  # type: ignore[arg-type]
    with pytest.raises(codeoid.InvalidInputError, match="unknown translation format"):
        memory.record_turn(session.id, EXCHANGES["anthropic"][0], format="claude")


def test_declare_tools_in_each_format() -> None:
    spec = {"name": "shell", "description": "run a command",
            "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                             "required": ["command"]}}
    chat = codeoid.declare_tools([spec], "openai_chat")
    assert chat["tools"][0]["function"]["name"] == "shell" and chat["losses"] == []
    anthropic = codeoid.declare_tools([spec], "anthropic")
    assert anthropic["tools"][0]["input_schema"]["required"] == ["command"]
    assert codeoid.declare_tools([spec], "gemini")["tools"]
    with pytest.raises(codeoid.InvalidInputError, match="input_schema"):
        codeoid.declare_tools([{"name": "x"}], "anthropic")
