#!/usr/bin/env python3
"""Validate provider request bodies produced by codeoid's translators against the providers'
own published request types.

Each input file is JSON with a ``backend`` object (``format`` is one of anthropic, openai_chat,
openai_responses, gemini) and a ``provider`` request body, as in the golden fixtures under
``fixtures/translate/<format>/``. Directories are searched recursively for ``*.json``; a file whose
``provider`` is null is skipped.

Checks, with the official SDKs from PyPI (see scripts/requirements-translate.txt):
- anthropic: ``anthropic.types.MessageCreateParams`` (non-streaming) through a pydantic
  ``TypeAdapter``;
- openai_chat: ``openai.types.chat.CompletionCreateParamsNonStreaming``;
- openai_responses: ``openai.types.responses.ResponseCreateParamsNonStreaming``;
- gemini: ``google.genai.types.Content`` / ``Tool`` ``model_validate`` (these models forbid
  unknown fields).
The Anthropic and OpenAI types are TypedDicts, which pydantic validates but whose unknown keys it
silently drops: the validated value is therefore compared with the input, and any key or value the
types did not keep is reported as a failure too. ``model`` and ``max_tokens`` are filled in when
absent, since the translators leave sampling parameters to the caller.

OpenAI Chat's ``reasoning_content`` (an extension of compatible providers, emitted only on request)
is checked to be a string on an assistant message and then removed before validation.

Usage: validate_translations.py [--check-sdks] PATH...
Exit codes: 0 all valid, 1 some invalid, 2 usage error, 3 an SDK is missing.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Callable


def load_sdks() -> dict[str, Callable[[dict[str, Any]], None]]:
    """Validators per format; raises ImportError when an SDK is missing."""
    import anthropic
    import openai
    import pydantic
    from anthropic.types import message_create_params
    from google.genai import types as genai_types
    from openai.types.chat import completion_create_params
    from openai.types.responses import response_create_params

    anthropic_body = pydantic.TypeAdapter(message_create_params.MessageCreateParamsNonStreaming)
    chat_body = pydantic.TypeAdapter(completion_create_params.CompletionCreateParamsNonStreaming)
    responses_body = pydantic.TypeAdapter(response_create_params.ResponseCreateParamsNonStreaming)

    def typed(
        adapter: pydantic.TypeAdapter,
        defaults: dict[str, Any],
        strip: Callable[[dict[str, Any]], dict[str, Any]] = lambda body: body,
    ) -> Callable[[dict[str, Any]], None]:
        def check(body: dict[str, Any]) -> None:
            full = {**defaults, **strip(body)}
            kept = materialize(adapter.validate_python(full))
            difference = first_difference(full, kept, "")
            if difference is not None:
                raise ValueError(f"the SDK type does not keep {difference}")

        return check

    def gemini(body: dict[str, Any]) -> None:
        unknown = set(body) - {"contents", "systemInstruction", "tools", "generationConfig"}
        if unknown:
            raise ValueError(f"unknown request fields {sorted(unknown)}")
        for content in body.get("contents", []):
            genai_types.Content.model_validate(content)
        if "systemInstruction" in body:
            genai_types.Content.model_validate(body["systemInstruction"])
        for tool in body.get("tools", []):
            genai_types.Tool.model_validate(tool)
        for content in body.get("contents", []):
            for part in content.get("parts", []):
                response = part.get("functionResponse", {}).get("response")
                if response is not None and not isinstance(response, dict):
                    raise ValueError("functionResponse.response must be an object")

    _ = (anthropic.__version__, openai.__version__)
    return {
        "anthropic": typed(anthropic_body, {"model": "claude-sonnet-4-5", "max_tokens": 1024}),
        "openai_chat": typed(chat_body, {"model": "gpt-5"}, without_reasoning_content),
        "openai_responses": typed(responses_body, {"model": "gpt-5"}),
        "gemini": gemini,
    }


def materialize(value: Any) -> Any:
    """Turns the lazy iterators pydantic returns for ``Iterable[...]`` fields into lists, and the
    response models some unions accept (``TextBlock`` for ``TextBlockParam``) into the fields that
    were given."""
    import pydantic

    if isinstance(value, pydantic.BaseModel):
        return materialize(value.model_dump(exclude_unset=True))
    if isinstance(value, Mapping):
        return {k: materialize(v) for k, v in value.items()}
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, Iterable):
        return [materialize(v) for v in value]
    return value


def first_difference(sent: Any, kept: Any, path: str) -> str | None:
    if isinstance(sent, dict) and isinstance(kept, dict):
        for key, value in sent.items():
            if key not in kept:
                return f"{path}.{key}" if path else key
            found = first_difference(value, kept[key], f"{path}.{key}" if path else key)
            if found is not None:
                return found
        return None
    if isinstance(sent, list) and isinstance(kept, list):
        if len(sent) != len(kept):
            return f"{path} (length {len(sent)} vs {len(kept)})"
        for i, (a, b) in enumerate(zip(sent, kept)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    if sent != kept or type(sent) is not type(kept):
        return f"{path} ({sent!r} became {kept!r})"
    return None


def without_reasoning_content(body: dict[str, Any]) -> dict[str, Any]:
    """OpenAI-compatible reasoning providers (DeepSeek, Moonshot...) add a string
    ``reasoning_content`` to assistant messages; OpenAI's own type does not have it. Checks that it
    is a string on an assistant message and validates the rest."""
    messages = []
    for message in body.get("messages", []):
        if "reasoning_content" in message:
            if message.get("role") != "assistant" or not isinstance(message["reasoning_content"], str):
                raise ValueError("reasoning_content must be a string on an assistant message")
            message = {k: v for k, v in message.items() if k != "reasoning_content"}
        messages.append(message)
    return {**body, "messages": messages}


def inputs(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for name in paths:
        path = Path(name)
        files.extend(sorted(path.rglob("*.json")) if path.is_dir() else [path])
    return files


def main(argv: list[str]) -> int:
    check_only = "--check-sdks" in argv
    paths = [a for a in argv if a != "--check-sdks"]
    try:
        validators = load_sdks()
    except ImportError as e:
        print(f"an SDK is missing: {e}", file=sys.stderr)
        return 3
    if check_only:
        return 0
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    passed = failed = 0
    for path in inputs(paths):
        data = json.loads(path.read_text())
        body = data.get("provider")
        if body is None:
            continue
        format_name = data["backend"]["format"]
        try:
            validators[format_name](body)
        except Exception as e:  # noqa: BLE001 - every validation failure is reported, not raised
            failed += 1
            # pydantic lists every union member that did not match; the first lines say enough.
            lines = str(e).splitlines()
            message = "\n    ".join(lines[:12] + (["..."] if len(lines) > 12 else []))
            print(f"FAIL {path} ({format_name}): {message}")
        else:
            passed += 1
            print(f"ok   {path} ({format_name})")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
