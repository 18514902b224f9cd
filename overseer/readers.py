"""Readers for stored trajectories: the native JSON Lines format and OpenAI-style chat transcripts.

Both formats hold one trajectory a line (see the README for their exact shape). A line that cannot be read
raises :class:`~overseer.exceptions.TrajectoryFormatError` naming the file, the line number and the field;
with ``skip_invalid=True`` the error goes to ``on_error`` and reading carries on.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, TypeAlias

from pydantic import ValidationError

from overseer.exceptions import TrajectoryFormatError
from overseer.steps import (
    FinalAnswer,
    Message,
    Observation,
    Plan,
    Step,
    ToolCall,
    Trajectory,
)

__all__ = ["Format", "parse_native", "parse_openai", "read_trajectories"]

Format: TypeAlias = Literal["native", "openai", "auto"]

_STEP_KINDS = {"plan", "tool_call", "observation", "message", "final", "tool_change"}
MAX_LINE_BYTES = 64 * 1024 * 1024


def read_trajectories(
    path: str | Path,
    format: Format = "auto",
    *,
    skip_invalid: bool = False,
    on_error: Callable[[TrajectoryFormatError], None] | None = None,
) -> Iterator[Trajectory]:
    """Yield the trajectories of a JSON Lines file (``.gz`` is read transparently).

    Args:
        path: the file to read.
        format: ``"native"``, ``"openai"``, or ``"auto"`` to decide per line (a line with ``messages`` and
            no ``steps`` is a chat transcript).
        skip_invalid: report a bad line to ``on_error`` and go on, instead of raising.
        on_error: receives each skipped line's error when ``skip_invalid`` is set.

    Raises:
        TrajectoryFormatError: a line cannot be read (and ``skip_invalid`` is not set).
        OSError: the file cannot be opened.
    """
    path = Path(path)
    name = str(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                trajectory = _parse_line(raw, name, lineno, format)
            except TrajectoryFormatError as err:
                if not skip_invalid:
                    raise
                if on_error is not None:
                    on_error(err)
                continue
            if trajectory is not None:
                yield trajectory


def _parse_line(raw: bytes, file: str, line: int, format: Format) -> Trajectory | None:
    if len(raw) > MAX_LINE_BYTES:
        raise TrajectoryFormatError(file, line, "", f"line is longer than {MAX_LINE_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise TrajectoryFormatError(file, line, "", f"not UTF-8 (byte {err.start})") from None
    if not text.strip():
        return None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise TrajectoryFormatError(file, line, "", f"not JSON: {err.msg} at column {err.colno}") from None
    except RecursionError:
        raise TrajectoryFormatError(file, line, "", "JSON nested too deeply") from None
    if not isinstance(obj, dict):
        raise TrajectoryFormatError(file, line, "", f"expected a JSON object, got {type(obj).__name__}")
    if format == "auto":
        format = "openai" if "messages" in obj and "steps" not in obj else "native"
    if format == "openai":
        try:
            return parse_openai(obj, file=file, line=line)
        except ValidationError as err:  # a value of the wrong type that the chat reader passed on
            first = err.errors(include_url=False)[0]
            raise TrajectoryFormatError(file, line, _field_path(tuple(first["loc"])), first["msg"]) from None
    return parse_native(obj, file=file, line=line)


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    previous: int | str | None = None
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(previous, int) and part in _STEP_KINDS:
            pass  # the discriminator tag pydantic inserts after a union member's index
        else:
            out += f".{part}" if out else str(part)
        previous = part
    return out


def parse_native(obj: dict[str, Any], *, file: str = "<dict>", line: int = 0) -> Trajectory:
    """Validate one native trajectory record.

    Raises:
        TrajectoryFormatError: naming the first offending field.
    """
    try:
        return Trajectory.model_validate(obj)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        problem = first["msg"]
        if first["type"] == "extra_forbidden":
            problem = "unknown field"
        raise TrajectoryFormatError(file, line, _field_path(tuple(first["loc"])), problem) from None
    except RecursionError:
        raise TrajectoryFormatError(file, line, "", "record nested too deeply") from None


def _content_text(content: Any, file: str, line: int, field: str) -> str:
    """Chat content is a string, null, or a list of parts with ``text``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts: list[str] = []
        for i, part in enumerate(content):
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part, dict):
                continue  # images and other non-text parts carry nothing a text scorer can read
            else:
                raise TrajectoryFormatError(file, line, f"{field}[{i}]", "expected a string or a content part")
        return "\n".join(texts)
    raise TrajectoryFormatError(file, line, field, f"expected a string or a list, got {type(content).__name__}")


def _arguments(raw: Any, file: str, line: int, field: str) -> dict[str, Any]:
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as err:
            raise TrajectoryFormatError(file, line, field, f"arguments are not valid JSON: {err.msg}") from None
    if not isinstance(raw, dict):
        raise TrajectoryFormatError(file, line, field, f"arguments must be a JSON object, got {type(raw).__name__}")
    return raw


def parse_openai(obj: dict[str, Any], *, file: str = "<dict>", line: int = 0) -> Trajectory:
    """Turn one OpenAI-style chat transcript into a trajectory.

    The first user message is the task. An assistant message with tool calls gives a :class:`Plan` for its
    text (when there is any) and a :class:`ToolCall` per call; a tool message gives an :class:`Observation`
    linked by ``tool_call_id``; the last assistant message without tool calls is the :class:`FinalAnswer`;
    other messages become :class:`Message` steps. System messages are kept in the metadata.

    Raises:
        TrajectoryFormatError: naming the first offending field.
    """
    messages = obj.get("messages")
    if not isinstance(messages, list):
        raise TrajectoryFormatError(file, line, "messages", "expected a list of chat messages")
    for key in ("id", "metadata"):
        if key in obj and not isinstance(obj[key], (str, dict) if key == "metadata" else str):
            raise TrajectoryFormatError(file, line, key, "has the wrong type")
    last_answer = -1
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise TrajectoryFormatError(file, line, f"messages[{i}]", "expected a JSON object")
        if msg.get("role") == "assistant" and not msg.get("tool_calls"):
            last_answer = i

    task: str | None = None
    steps: list[Step] = []
    system: list[str] = []
    tools_by_call: dict[str, str] = {}
    for i, msg in enumerate(messages):
        role = msg.get("role")
        field = f"messages[{i}]"
        content = _content_text(msg.get("content"), file, line, f"{field}.content")
        if role in ("system", "developer"):
            system.append(content)
        elif role == "user":
            if task is None:
                task = content
            else:
                steps.append(Message(role="user", content=content))
        elif role == "assistant":
            calls = msg.get("tool_calls") or []
            if not isinstance(calls, list):
                raise TrajectoryFormatError(file, line, f"{field}.tool_calls", "expected a list")
            legacy = msg.get("function_call")
            if not calls and isinstance(legacy, dict):  # the pre-tools function-calling format
                calls = [{"id": None, "function": legacy}]
            if not calls:
                steps.append(
                    FinalAnswer(content=content) if i == last_answer else Message(role="assistant", content=content)
                )
                continue
            if content.strip():
                steps.append(Plan(content=content))
            for j, call in enumerate(calls):
                cfield = f"{field}.tool_calls[{j}]"
                if isinstance(call, dict) and isinstance(call.get("custom"), dict):  # a custom (free-text) tool
                    custom = call["custom"]
                    call = {
                        **call,
                        "function": {"name": custom.get("name"), "arguments": {"input": custom.get("input")}},
                    }
                fn = call.get("function") if isinstance(call, dict) else None
                if not isinstance(fn, dict):
                    raise TrajectoryFormatError(file, line, f"{cfield}.function", "expected an object")
                name = fn.get("name")
                if not isinstance(name, str) or not name:
                    raise TrajectoryFormatError(file, line, f"{cfield}.function.name", "expected a tool name")
                call_id = call.get("id")
                if call_id is not None and not isinstance(call_id, str):
                    raise TrajectoryFormatError(file, line, f"{cfield}.id", "expected a string")
                args = _arguments(fn.get("arguments"), file, line, f"{cfield}.function.arguments")
                if call_id:
                    tools_by_call[call_id] = name
                steps.append(ToolCall(tool=name, args=args, call_id=call_id))
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id is not None and not isinstance(call_id, str):
                raise TrajectoryFormatError(file, line, f"{field}.tool_call_id", "expected a string")
            # a result whose call is not in the transcript (cut, or made by another component) is kept, unlinked
            tool = tools_by_call.get(call_id or "") or (msg.get("name") if isinstance(msg.get("name"), str) else None)
            steps.append(Observation(call_id=call_id, tool=tool, content=content))
        elif role == "function":  # the legacy function-calling role
            name = msg.get("name")
            if name is not None and not isinstance(name, str):
                raise TrajectoryFormatError(file, line, f"{field}.name", "expected a string")
            steps.append(Observation(tool=name, content=content))
        else:
            raise TrajectoryFormatError(file, line, f"{field}.role", f"unknown role {role!r}")
    if task is None:
        raise TrajectoryFormatError(file, line, "messages", "no user message (the first user message is the task)")
    metadata = dict(obj.get("metadata") or {})
    if isinstance(obj.get("model"), str):
        metadata.setdefault("model", obj["model"])
    if system:
        metadata.setdefault("system", "\n\n".join(system))
    traj_id = obj.get("id") or f"{Path(file).name}:{line}"
    return Trajectory(id=traj_id, task=task, metadata=metadata, steps=tuple(steps))
