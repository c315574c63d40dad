"""Tool calls in a reply: the model's `<tool_call>` blocks turned into OpenAI `tool_calls`.

Two formats are read, the ones chat templates teach:
- Qwen3.5 / Qwen3-Coder: `<tool_call>\\n<function=NAME>\\n<parameter=P>\\nVALUE\\n</parameter>\\n</function>\\n</tool_call>`;
  a VALUE is text, converted to a number, boolean, list or object unless the tool's schema says string;
- Hermes / Qwen2.5 / Qwen3: `<tool_call>\\n{"name": NAME, "arguments": {...}}\\n</tool_call>`.

`ToolCallSplitter` works on streamed text: it passes on the text before the first `<tool_call>`,
holds what could still become one (and trailing whitespace, which a call would drop), and decides at
the end. A reply whose blocks do not parse is returned as plain text: nothing is lost.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from atomicchat.server.stops import partial_tail

OPEN = "<tool_call>"
_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.S)
_FUNCTION = re.compile(r"\s*<function=([^>\n]+)>(.*?)</function>\s*\Z", re.S)
_PARAMETER = re.compile(r"<parameter=([^>\n]+)>\n?(.*?)\n?</parameter>", re.S)


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str  # a JSON object, as OpenAI sends it
    id: str

    def as_openai(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


def _schema_types(tools: tuple[dict[str, Any], ...], name: str) -> dict[str, Any]:
    for tool in tools:
        fn = tool.get("function") or {}
        if fn.get("name") == name:
            props = (fn.get("parameters") or {}).get("properties") or {}
            return {k: (v or {}).get("type") for k, v in props.items() if isinstance(v, dict)}
    return {}


def _value(raw: str, declared: Any) -> Any:
    """A parameter's text as the schema wants it: strings stay as written, anything else is JSON if it parses."""
    is_string = declared == "string" or (isinstance(declared, list) and declared and set(declared) <= {"string", "null"})
    if is_string:
        return raw
    if declared == "boolean" and raw.strip().lower() in ("true", "false"):
        return raw.strip().lower() == "true"  # Qwen's template itself writes Python's True/False
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _one(block: str, tools: tuple[dict[str, Any], ...]) -> tuple[str, dict[str, Any]] | None:
    m = _FUNCTION.match(block)
    if m:
        name = m.group(1).strip()
        types = _schema_types(tools, name)
        params = {k.strip(): _value(v, types.get(k.strip())) for k, v in _PARAMETER.findall(m.group(2))}
        return (name, params) if name else None
    try:
        obj = json.loads(block)
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
        return None
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return None
    return (obj["name"], args) if isinstance(args, dict) else None


def parse_calls(text: str, tools: tuple[dict[str, Any], ...]) -> list[ToolCall] | None:
    """The calls of `text`, which starts at (whitespace before) the first `<tool_call>`; None unless
    every block parses and only whitespace lies between and after them."""
    calls, pos = [], 0
    for m in _BLOCK.finditer(text):
        if text[pos : m.start()].strip():
            return None
        one = _one(m.group(1).strip(), tools)
        if one is None:
            return None
        calls.append(ToolCall(one[0], json.dumps(one[1], ensure_ascii=False), "call_" + uuid.uuid4().hex[:24]))
        pos = m.end()
    return calls if calls and not text[pos:].strip() else None


class ToolCallSplitter:
    """Feed a reply's text pieces; `feed` returns the content that is safe to send now, `finish` the
    rest of the content and the calls."""

    def __init__(self, tools: tuple[dict[str, Any], ...]) -> None:
        self.tools = tools
        self._held = ""
        self._calls: str | None = None  # the text from the first <tool_call> on

    def feed(self, piece: str) -> str:
        if self._calls is not None:
            self._calls += piece
            return ""
        text = self._held + piece
        at = text.find(OPEN)
        if at >= 0:
            send = text[:at].rstrip()
            self._calls, self._held = text[len(send) :], ""  # whitespace kept in case it is no call
            return send
        send = text[: len(text) - partial_tail(text, OPEN)]
        send = send.rstrip()  # whitespace before a call is not content; held until text follows it
        self._held = text[len(send) :]
        return send

    def finish(self) -> tuple[str, list[ToolCall]]:
        if self._calls is None:
            rest, self._held = self._held, ""
            return rest, []
        calls = parse_calls(self._calls, self.tools)
        if calls is None:  # not a call after all: the text goes out as it came
            return self._calls, []
        return "", calls
