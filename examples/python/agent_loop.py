"""A complete agent loop in plain Python over codeoid, with no framework and no network.

An OpenAI-style tool-calling loop: the harness sends the conversation and the tool declarations
to a model, runs the tool calls the model makes, sends the results back, and repeats until the
model answers in text. The model here is a scripted fake that returns canned OpenAI Chat
messages, so the example runs anywhere; swap `ScriptedModel.complete` for a real client call and
nothing else changes.

What codeoid does in the loop:
- every message is recorded (`record_turn(..., format="openai_chat")`), with the call's usage,
  so the rotation policy can measure how full the context is;
- the four memory tools (`recall`, `recall_file`, `timeline`, `get_episode`) are declared next
  to the harness's own `read_file` tool (`Memory.tool_declarations`) and answered by
  `Memory.call_tool`;
- the harness itself calls `Memory.recall` to show what memory holds about each new prompt;
- when the policy rotates the session, the harness drops its message list and continues from the
  seed block, and the model gets back the file it had read through `recall_file`.

The example checks that all of this happened and exits non-zero if not (`make test-python` runs
it). It embeds with the model in `$CODEOID_TEST_MODEL_DIR` when that is set; otherwise recall is
lexical (words, recency and paths), which is enough here.

Run it: `python examples/python/agent_loop.py`.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import codeoid

SYSTEM = "You are a coding agent. Use read_file to look at files; use the memory tools to remember."
CONTEXT_WINDOW = 4_000  # tokens: tiny, so this short demo rotates
PARSER_SOURCE = "def parse(line):\n    return [field.strip() for field in line.split(',')]\n"

READ_FILE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file of the workspace and return its content.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "relative to the workspace root"}},
            "required": ["path"],
            "additionalProperties": False,
        },
    },
}


class Failed(Exception):
    """The example did not do what it says."""


def check(condition: bool, what: str) -> None:
    """Like `assert`, but kept under `python -O`."""
    if not condition:
        raise Failed(what)


@dataclass(frozen=True)
class Reply:
    """What a chat-completions call returns: the assistant message and the call's usage."""

    message: dict[str, Any]
    usage: dict[str, int]


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def say(text: str, *calls: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = list(calls)
    return message


class ScriptedModel:
    """A fake OpenAI Chat model: answers from a script and reports usage as a real API does.

    Each step gives the prompt tokens the provider would report for that call and the reply. They
    grow as the conversation does, until the context is nearly full (the answer to the second
    prompt reports 3,950 of 4,000 tokens, past the 97% hard threshold), which makes the rotation
    policy rotate the session; after the rotation the context is small again.
    """

    def __init__(self) -> None:
        steps: list[tuple[int, dict[str, Any]]] = [
            # Prompt 1: read the parser, then answer.
            (1_500, say("Let me read the parser.", tool_call("call_1", "read_file", {"path": "src/parser.py"}))),
            (2_600, say("parse() splits a line on commas and strips the spaces around each field.")),
            # Prompt 2: read the CLI, then answer. The context is now nearly full.
            (3_000, say("", tool_call("call_2", "read_file", {"path": "src/cli.py"}))),
            (3_950, say("There are two modules: parser and cli, which imports parser.")),
            # Prompt 3 comes after the rotation: the parser is no longer in the model's context,
            # so it asks memory for the read instead of reading the file again, and checks what
            # it concluded back then.
            (900, say("", tool_call("call_3", "recall_file", {"path": "src/parser.py"}))),
            # Its own episodes from before the rotation are searched: they left the context with it.
            (1_400, say("", tool_call("call_4", "recall", {"query": "what does parse do with commas", "limit": 3}))),
            (1_900, say("From memory: parse() splits on commas with line.split(','); I will add quoting.")),
        ]
        self.script: Iterator[tuple[int, dict[str, Any]]] = iter(steps)

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        check(bool(messages) and bool(tools), "the harness sends its context and declares its tools")
        prompt_tokens, message = next(self.script)
        return Reply(message, {"input_tokens": prompt_tokens, "output_tokens": 40})


def make_workspace(root: pathlib.Path) -> pathlib.Path:
    workspace = root / "demo-project"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "parser.py").write_text(PARSER_SOURCE)
    (workspace / "src" / "cli.py").write_text("import parser\n")
    return workspace


@dataclass(frozen=True)
class ToolRun:
    """One tool call the harness ran, for the checks at the end."""

    name: str
    output: str
    is_error: bool
    after_rotation: bool


class Harness:
    """The loop: record, call the model, run tools, rotate when told to."""

    def __init__(self, memory: codeoid.Memory, model: ScriptedModel, workspace: pathlib.Path) -> None:
        self.memory = memory
        self.model = model
        self.workspace = workspace.resolve()
        self.session = memory.start_session(name="add quoting to the parser", model="scripted")
        self.tools: list[dict[str, Any]] = [*memory.tool_declarations("openai_chat")["tools"], READ_FILE_TOOL]
        self.memory_tools = {schema["name"] for schema in memory.tool_schemas()}
        self.messages: list[dict[str, Any]] = []
        self.rotations = 0
        self.runs: list[ToolRun] = []
        self.reset_context()

    def reset_context(self) -> None:
        index = self.memory.workspace_index(self.session.id)
        self.messages = [{"role": "system", "content": f"{SYSTEM}\n\n{index}".strip()}]

    def send(self, message: dict[str, Any], usage: dict[str, int] | None = None) -> codeoid.TurnOutcome:
        """Appends a message to the context and records it."""
        self.messages.append(message)
        return self.memory.record_turn(self.session.id, message, format="openai_chat", usage=usage)

    def run_tool(self, name: str, arguments: str) -> tuple[str, bool]:
        """Runs one tool call; returns its output and whether it failed."""
        if name in self.memory_tools:
            result = self.memory.call_tool(name, arguments, session=self.session.id)
            return result.text, result.is_error
        if name != "read_file":
            return f"unknown tool {name!r}", True
        path = (self.workspace / json.loads(arguments)["path"]).resolve()
        if not path.is_relative_to(self.workspace) or not path.is_file():
            return f"no such file in the workspace: {path}", True
        return path.read_text(), False

    def prompt(self, text: str) -> str:
        seed = self.memory.take_seed(self.session.id)
        if seed is not None:
            text = f"{seed.text}\n\n{text}"
        for hit in self.memory.recall(text, session=self.session.id, include_current_session=True, limit=2):
            print(f"  memory has: {hit.summary} (score {hit.score:.2f})")
        self.send({"role": "user", "content": text})
        rotated = False
        while True:
            reply = self.model.complete(self.messages, self.tools)
            outcome = self.send(reply.message, reply.usage)
            for call in reply.message.get("tool_calls") or []:
                function = call["function"]
                output, failed = self.run_tool(function["name"], function["arguments"])
                print(f"  tool {function['name']}: {'error: ' if failed else ''}{output.splitlines()[0]}")
                self.runs.append(ToolRun(function["name"], output, failed, self.rotations > 0))
                self.send({"role": "tool", "tool_call_id": call["id"], "content": output})
            if outcome.rotation is not None:
                self.rotations += 1
                reason = outcome.decision.message if outcome.decision else ""
                print(f"  rotated (#{outcome.rotation.count}): {reason}")
                rotated = True
            if not reply.message.get("tool_calls"):
                if rotated:
                    # Same session, same memory, a fresh context: the next user message starts
                    # with the seed block (take_seed above).
                    self.reset_context()
                return str(reply.message["content"])


def open_memory(root: pathlib.Path, workspace: pathlib.Path) -> codeoid.Memory:
    model_dir = os.environ.get("CODEOID_TEST_MODEL_DIR")
    if model_dir:
        return codeoid.Memory(root / "memory.db", workspace, context_window=CONTEXT_WINDOW, min_turns=2,
                              model_dir=model_dir, env=False)
    return codeoid.Memory(root / "memory.db", workspace, context_window=CONTEXT_WINDOW, min_turns=2,
                          embeddings=False, env=False)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        workspace = make_workspace(root)
        with open_memory(root, workspace) as memory:
            harness = Harness(memory, ScriptedModel(), workspace)
            for text in ["What does the parser do?", "Which modules are there?", "Add quoting to the parser."]:
                print(f"user: {text}")
                answer = harness.prompt(text)
                memory.flush(timeout=60.0)  # the new episodes are searchable by meaning
                print(f"assistant: {answer}")
            status = memory.embedding_status()
            print(f"embeddings: {status.phase}, {status.indexed_episodes} episodes indexed")
            for warning in memory.warnings():
                print(f"warning: {warning}")

            # What the example says it does, checked.
            session = memory.session(harness.session.id)
            check(harness.rotations == 1 and session.rotation_count == 1, "the full context rotated once")
            first_prompt = harness.messages[1]["content"]
            check(harness.messages[1]["role"] == "user" and first_prompt.startswith("<rotation_context>"),
                  "the context after the rotation starts with the seed block")
            check(PARSER_SOURCE not in json.dumps(harness.messages[:3]),
                  "the fresh context does not hold the file read before the rotation")
            after = [run for run in harness.runs if run.after_rotation]
            check([run.name for run in after] == ["recall_file", "recall"],
                  "after the rotation the model used memory tools, not read_file")
            check(not any(run.is_error for run in after), "the memory tools answered without error")
            check("line.split(',')" in after[0].output and "unchanged since this read" in after[0].output,
                  "recall_file gave back the parser as read before the rotation, unchanged on disk")
            check("splits a line on commas" in after[1].output,
                  "recall found the answer given before the rotation")
            hits = memory.recall("parser", limit=20)
            check(any(hit.tool_name == "read_file" for hit in hits), "Memory.recall finds the read")
            memory.finish_session(harness.session.id)
            print(f"{session.turn_count} turns, {session.rotation_count} rotation(s), "
                  f"{len(memory.timeline(limit=100))} episodes in memory")


if __name__ == "__main__":
    try:
        main()
    except Failed as failure:
        print(f"agent_loop.py FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
    print("agent_loop.py: ok")
