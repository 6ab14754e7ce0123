"""The four memory tools: declarations (generic and per provider) and call_tool."""

from __future__ import annotations

import json
import pathlib

import pytest

import codeoid
from helpers import read_file_exchange

NAMES = ["recall", "recall_file", "timeline", "get_episode"]
FORMATS = ["anthropic", "openai_chat", "openai_responses", "gemini"]


def test_tool_schemas(memory: codeoid.Memory) -> None:
    schemas = memory.tool_schemas()
    assert [s["name"] for s in schemas] == NAMES
    for schema in schemas:
        assert set(schema) == {"name", "description", "input_schema"}
        assert schema["description"] and schema["input_schema"]["type"] == "object"
    recall = schemas[0]["input_schema"]
    assert recall["required"] == ["query"] and recall["properties"]["limit"]["maximum"] == 20
    assert [s["name"] for s in memory.tool_schemas("codeoid_memory")] == [f"codeoid_memory__{n}" for n in NAMES]
    json.dumps(schemas)  # plain JSON data


def test_tool_schemas_bad_prefix(memory: codeoid.Memory) -> None:
    for bad in ["", "has space", "x" * 60, "é"]:
        with pytest.raises(codeoid.InvalidInputError, match="tool name prefix .* is invalid"):
            memory.tool_schemas(bad)
    with pytest.raises(TypeError):
        memory.tool_schemas(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("format", FORMATS)
def test_tool_declarations_per_provider(memory: codeoid.Memory, format: str) -> None:
    declared = memory.tool_declarations(format)
    assert declared == codeoid.declare_tools(memory.tool_schemas(), format)
    assert set(declared) == {"tools", "losses"}
    text = json.dumps(declared["tools"])
    assert all(f'"{name}"' in text for name in NAMES)
    prefixed = json.dumps(memory.tool_declarations(format, prefix="mem")["tools"])
    assert '"mem__recall"' in prefixed


def test_tool_declaration_shapes(memory: codeoid.Memory) -> None:
    anthropic = memory.tool_declarations("anthropic")["tools"]
    assert anthropic[0]["name"] == "recall" and "input_schema" in anthropic[0]
    chat = memory.tool_declarations("openai_chat")["tools"]
    assert chat[0]["type"] == "function" and chat[0]["function"]["name"] == "recall"
    gemini = memory.tool_declarations("gemini")
    assert "functionDeclarations" in json.dumps(gemini["tools"])
    assert gemini["losses"], "Gemini's schema subset drops keywords, and says so"
    assert memory.tool_declarations("gemini", options={"gemini_json_schema": True})["losses"] == []


def test_tool_declarations_bad_input(memory: codeoid.Memory) -> None:
    with pytest.raises(codeoid.InvalidInputError, match="cohere"):
        memory.tool_declarations("cohere")
    with pytest.raises(codeoid.InvalidInputError, match='has no option "nope"'):
        memory.tool_declarations("anthropic", options={"nope": 1})
    with pytest.raises(codeoid.InvalidInputError, match="tool name prefix"):
        memory.tool_declarations("anthropic", prefix="a b")
    with pytest.raises(TypeError):
        memory.tool_declarations(None)  # type: ignore[arg-type]


def test_call_tool_answers_each_tool(memory: codeoid.Memory, workspace: pathlib.Path) -> None:
    earlier = memory.start_session()
    episode_id = read_file_exchange(memory, earlier.id, content="fn main() { println!(\"hello\") }")
    session = memory.start_session()

    recall = memory.call_tool("recall", {"query": "println hello"}, session=session.id)
    assert not recall.is_error and episode_id in recall.text and "prior session #1" in recall.text
    as_json = memory.call_tool("recall", json.dumps({"query": "println hello"}), session=session.id)
    assert as_json.text.split("\n")[0] == recall.text.split("\n")[0], "a JSON string or a dict"
    mine = memory.call_tool("recall", {"query": "println hello"}, session=earlier.id)
    assert episode_id not in mine.text, "the calling session's own episodes are in its context"

    found = memory.call_tool("recall_file", {"path": "src/main.rs"}, session=session.id)
    assert not found.is_error and episode_id in found.text
    timeline = memory.call_tool("timeline", None, session=session.id)
    assert not timeline.is_error and episode_id in timeline.text
    episode = memory.call_tool("get_episode", {"episode_id": episode_id})
    assert not episode.is_error and 'println!("hello")' in episode.text
    assert memory.call_tool("codeoid_memory__get_episode", {"episode_id": episode_id}) == episode
    assert repr(episode).startswith("ToolResult(is_error=False, text=")


def test_the_models_mistakes_are_error_results(memory: codeoid.Memory) -> None:
    session = memory.start_session()
    cases = [
        (("nope", {}), 'unknown memory tool "nope"; the memory tools are recall, recall_file, timeline, get_episode'),
        (("recall", {"query": "x", "limit": 99}), "limit"),
        (("recall", {"query": "x", "bogus": 1}), 'unknown field "bogus"'),
        (("recall", {}), "query"),
        (("recall", "{not json"), "not valid JSON"),
        (("recall", "[1, 2]"), "must be a JSON object"),
        (("recall", [1, 2]), "must be a JSON object"),
        (("get_episode", {"episode_id": "ep_0000000000000000"}), "ep_0000000000000000"),
    ]
    for (name, arguments), expected in cases:
        out = memory.call_tool(name, arguments, session=session.id)  # type: ignore[arg-type]
        assert out.is_error, (name, arguments, out.text)
        assert expected in out.text, (name, arguments, out.text)
    unknown = memory.call_tool("recall", {"query": "x"}, session="no-such-session")
    assert unknown.is_error and "no-such-session" in unknown.text


def test_decoded_arguments_codeoid_cannot_hold_are_the_models_mistake(memory: codeoid.Memory) -> None:
    # What a harness's json.loads makes of a model's text: values JSON carries, codeoid cannot.
    for arguments, expected in [
        (json.loads('{"query": "p", "limit": 100000000000000000000000}'), "outside the 64-bit range"),
        (json.loads('{"query": "p", "limit": NaN}'), "NaN"),
        (json.loads('{"query": "p", "x": ' + "[" * 129 + "]" * 129 + "}"), "deeper than 128"),
        (json.loads('{"query": "\\ud800"}'), "not valid Unicode"),
    ]:
        out = memory.call_tool("recall", arguments)
        assert out.is_error, out.text
        assert out.text.startswith("invalid arguments for recall: "), out.text
        assert 'Expected: {"query"' in out.text, out.text
        assert expected in out.text, out.text


def test_call_tool_programmer_errors_raise(memory: codeoid.Memory) -> None:
    with pytest.raises(TypeError, match=r"arguments is bytes; .*\(decode bytes to str first\)"):
        memory.call_tool("recall", b'{"query": "x"}')  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="arguments is bytes"):
        memory.call_tool("recall", b"\xff\xfe not utf-8")  # type: ignore[arg-type]
    with pytest.raises(codeoid.InvalidInputError, match="arguments is not valid Unicode"):
        memory.call_tool("recall", '{"query": "\ud800"}')
    with pytest.raises(TypeError, match="key of type int"):
        memory.call_tool("recall", {1: "x"})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match=r"arguments\['query'\] is set"):
        memory.call_tool("recall", {"query": {"a"}})
    with pytest.raises(TypeError):
        memory.call_tool(3, {})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        memory.call_tool("recall", {}, session=3)  # type: ignore[arg-type]


def test_memory_switched_off(tmp_path: pathlib.Path, workspace: pathlib.Path) -> None:
    with codeoid.Memory(tmp_path / "off.db", workspace, memory_enabled=False, embeddings=False,
                        env=False) as memory:
        out = memory.call_tool("recall", {"query": "x"})
        assert out.is_error and "switched off" in out.text


def test_closed_memory(memory: codeoid.Memory) -> None:
    memory.close()
    for call_it in (lambda: memory.call_tool("recall", {"query": "x"}), memory.tool_schemas,
                    lambda: memory.tool_declarations("anthropic")):
        with pytest.raises(codeoid.InvalidInputError, match="closed"):
            call_it()
