#!/usr/bin/env python3
"""Independent counts over Claude Code transcripts, for the import tests.

Written from the rules in docs/import.md, not from the Rust code, using only the standard
library: the Rust importer's counts are asserted equal to what this script prints.

Usage: claude_code_counts.py FILE...   -> one JSON object {file: counts} on stdout.

Rules (docs/import.md, "Claude Code"):
- a non-blank line that is not a JSON object with a string "type" is malformed; so is a
  user/assistant line whose "message" is not an object or whose content is neither a string
  nor a list of objects with a string "type", or whose blocks lack what they need (tool_use:
  id and name; tool_result: tool_use_id and a string/list/null content of objects; text: text;
  redacted_thinking: data);
- a user/assistant line whose uuid was already imported from the file is a duplicate;
- other line types are non-message lines;
- files named agent-*.jsonl are one subagent conversation; elsewhere isSidechain lines are
  grouped by the root of their parentUuid chain; the rest is the main conversation;
- within a conversation: assistant lines with the same message id as the open assistant turn
  join it; tool-result-only user lines join the results turn of the open exchange; other user
  lines start a new turn and close the exchange; API-error and <synthetic> lines always start
  a new assistant turn;
- usage (assistant lines with a model other than <synthetic>) is counted once per requestId
  (else message id) per conversation, taking the field-wise maximum of repeated reports.
"""

import json
import os
import sys

KNOWN_ASSISTANT = {"text", "thinking", "redacted_thinking", "tool_use", "image"}
KNOWN_USER = {"text", "image", "tool_result"}
IMAGE_SOURCES = {"base64": "data", "url": "url", "file": "file_id"}


class Malformed(Exception):
    pass


def is_image(block):
    src = block.get("source")
    if not isinstance(src, dict):
        return False
    need = IMAGE_SOURCES.get(src.get("type"))
    return need is not None and isinstance(src.get(need), str)


def nonempty_str(value):
    return isinstance(value, str) and value.strip() != ""


def convert(role, blocks):
    """Returns (kinds of canonical parts, number of unsupported blocks)."""
    kinds, unsupported = [], 0
    for block in blocks:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise Malformed("bad block")
        t = block["type"]
        if t == "text":
            if not isinstance(block.get("text"), str):
                raise Malformed("text without text")
            kinds.append(("text", None))
        elif t == "image":
            if is_image(block):
                kinds.append(("image", None))
            else:
                unsupported += 1
        elif role == "assistant" and t == "thinking":
            kinds.append(("thinking", None))
        elif role == "assistant" and t == "redacted_thinking":
            if not isinstance(block.get("data"), str):
                raise Malformed("redacted without data")
            kinds.append(("thinking", None))
        elif role == "assistant" and t == "tool_use":
            if not (nonempty_str(block.get("id")) and nonempty_str(block.get("name"))):
                raise Malformed("tool_use without id/name")
            kinds.append(("tool_use", None))
        elif role == "user" and t == "tool_result":
            if not nonempty_str(block.get("tool_use_id")):
                raise Malformed("tool_result without id")
            content = block.get("content")
            if isinstance(content, list):
                for item in content:
                    if not isinstance(item, dict):
                        raise Malformed("tool_result item")
                    it = item.get("type")
                    if it == "text":
                        if not isinstance(item.get("text"), str):
                            raise Malformed("tool_result text")
                    elif it == "image" and is_image(item):
                        pass
                    else:
                        unsupported += 1
            elif content is not None and not isinstance(content, str):
                raise Malformed("tool_result content")
            kinds.append(("tool_result", block.get("is_error") is True))
        else:
            unsupported += 1
    return kinds, unsupported


class Conversation:
    def __init__(self):
        self.turns = []
        self.open = None
        self.usage = {}

    def new_turn(self, role):
        self.turns.append({"role": role, "kinds": [], "usage": False, "unsupported": 0})
        return len(self.turns) - 1

    def add(self, index, kinds, unsupported):
        self.turns[index]["kinds"] += kinds
        self.turns[index]["unsupported"] += unsupported

    def assistant(self, key, kinds, unsupported):
        if self.open is not None and key is not None and self.open["key"] == key:
            index = self.open["a"]
        else:
            index = self.new_turn("assistant")
            self.open = {"a": index, "key": key, "r": None}
        self.add(index, kinds, unsupported)
        return index

    def results(self, kinds, unsupported):
        if self.open is None:
            index = self.new_turn("user")
        elif self.open["r"] is None:
            index = self.new_turn("user")
            self.open["r"] = index
        else:
            index = self.open["r"]
        self.add(index, kinds, unsupported)

    def user(self, kinds, unsupported):
        self.open = None
        index = self.new_turn("user")
        self.add(index, kinds, unsupported)

    def count_usage(self, index, key, usage):
        fields = (
            usage.get("input_tokens"),
            usage.get("output_tokens"),
            usage.get("cache_read_input_tokens"),
            usage.get("cache_creation_input_tokens"),
        )
        values = [v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0 for v in fields]
        if key is not None and key in self.usage:
            previous = self.usage[key]
            self.usage[key] = [max(a, b) for a, b in zip(previous, values)]
            return True
        self.turns[index]["usage"] = True
        self.usage[key if key is not None else ("anon", len(self.usage))] = values
        return False

    def kept(self):
        return [t for t in self.turns if t["kinds"] or t["usage"] or t["unsupported"]]


def count_file(path):
    counts = {
        "malformed_lines": 0,
        "duplicate_lines": 0,
        "non_message_lines": 0,
        "repeated_usage": 0,
    }
    agent_file = os.path.basename(path).startswith("agent-")
    main = Conversation()
    chains = []
    chain_of = {}
    seen = set()
    with open(path, "rb") as handle:
        raw_lines = handle.read().split(b"\n")
    for raw in raw_lines:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if raw.strip() == b"":
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            counts["malformed_lines"] += 1
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            counts["malformed_lines"] += 1
            continue
        role = obj["type"]
        if role not in ("user", "assistant"):
            counts["non_message_lines"] += 1
            continue
        message = obj.get("message")
        if not isinstance(message, dict) or "content" not in message:
            counts["malformed_lines"] += 1
            continue
        content = message["content"]
        if isinstance(content, str):
            blocks = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            blocks = content
        else:
            counts["malformed_lines"] += 1
            continue
        uuid = obj.get("uuid") if isinstance(obj.get("uuid"), str) and obj.get("uuid") else None
        if uuid is not None and uuid in seen:
            counts["duplicate_lines"] += 1
            continue
        try:
            kinds, unsupported = convert(role, blocks)
        except Malformed:
            counts["malformed_lines"] += 1
            continue
        if uuid is not None:
            seen.add(uuid)
        if agent_file or obj.get("isSidechain") is not True:
            conv = main
        else:
            parent = obj.get("parentUuid")
            if isinstance(parent, str) and parent in chain_of:
                conv = chain_of[parent]
            else:
                conv = Conversation()
                chains.append(conv)
            if uuid is not None:
                chain_of[uuid] = conv
        usage = message.get("usage") if isinstance(message.get("usage"), dict) else None
        if not kinds and not unsupported and usage is None:
            counts["non_message_lines"] += 1
            continue
        model = message.get("model") if isinstance(message.get("model"), str) else ""
        synthetic = model == "<synthetic>"
        msg_id = message.get("id") if isinstance(message.get("id"), str) and message.get("id") else None
        req_id = obj.get("requestId") if isinstance(obj.get("requestId"), str) and obj.get("requestId") else None
        if role == "assistant":
            standalone = obj.get("isApiErrorMessage") is True or synthetic
            key = None if standalone else (msg_id or req_id)
            index = conv.assistant(key, kinds, unsupported)
            if usage is not None and model and not synthetic:
                if conv.count_usage(index, req_id or msg_id, usage):
                    counts["repeated_usage"] += 1
        elif blocks and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
            conv.results(kinds, unsupported)
        else:
            conv.user(kinds, unsupported)

    totals = {
        "sessions": 0,
        "user_turns": 0,
        "assistant_turns": 0,
        "tool_calls": 0,
        "tool_results": 0,
        "tool_errors": 0,
        "usage_calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_read_tokens": 0,
        "cache_creation_tokens": 0,
    }
    for conv in [main] + chains:
        turns = conv.kept()
        if not turns:
            continue
        totals["sessions"] += 1
        for turn in turns:
            totals[turn["role"] + "_turns"] += 1
            for kind, is_error in turn["kinds"]:
                if kind == "tool_use":
                    totals["tool_calls"] += 1
                elif kind == "tool_result":
                    totals["tool_results"] += 1
                    totals["tool_errors"] += 1 if is_error else 0
        for values in conv.usage.values():
            totals["usage_calls"] += 1
            totals["input_tokens"] += values[0]
            totals["output_tokens"] += values[1]
            totals["cache_read_tokens"] += values[2]
            totals["cache_creation_tokens"] += values[3]
    totals.update(counts)
    return totals


def main(paths):
    json.dump({path: count_file(path) for path in paths}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
