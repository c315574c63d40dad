"""Request parsing and response shapes of the OpenAI API (chat completions, completions, models).

Everything a client can send is validated here, before a job reaches the engine, and every refusal is
an `ApiError` that renders as the OpenAI error object: status code + `{"error": {message, type, code}}`.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from atomicchat.engine.requests import gen_params
from atomicchat.engine.types import GenParams

MAX_BODY_BYTES = 4 * 1024 * 1024  # far above any context we run; refuses a runaway upload early
MAX_STOP_STRINGS = 4  # as the OpenAI API
MAX_STOP_LENGTH = 256
ROLES = ("system", "user", "assistant", "developer", "tool")
MAX_TOOLS = 128


class ApiError(Exception):
    """A refusal the client should see; `status` is the HTTP code."""

    def __init__(self, status: int, message: str, type_: str = "invalid_request_error", code: str | None = None,
                 param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type_
        self.code = code
        self.param = param

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


@dataclass(frozen=True)
class Sampling:
    """The OpenAI sampling fields, resolved against the server's defaults."""

    max_tokens: int
    temperature: float
    top_p: float
    top_k: int
    min_p: float
    seed: int | None

    def gen_params(self) -> GenParams:
        return gen_params(**asdict(self))


@dataclass(frozen=True)
class ApiRequest:
    """A validated chat or completion request. Exactly one of `messages` and `prompt` is set."""

    model: str
    sampling: Sampling
    stream: bool
    include_usage: bool
    stop: tuple[str, ...] = ()
    messages: tuple[dict[str, Any], ...] | None = None
    prompt: str | None = None
    enable_thinking: bool | None = None
    # OpenAI tool objects shown to the model through its chat template; None when the request has
    # none or says tool_choice "none". The reply's <tool_call> blocks come back as `tool_calls`.
    tools: tuple[dict[str, Any], ...] | None = None
    # A last assistant message without tool calls is the start of the reply, as llama-server takes it:
    # the model goes on from this text (which the response does not repeat), in the same turn.
    prefill: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_chat(self) -> bool:
        return self.messages is not None


def _bad(message: str, param: str | None = None, code: str | None = None) -> ApiError:
    return ApiError(400, message, code=code, param=param)


def _number(body: dict[str, Any], name: str, default: float, lo: float, hi: float) -> float:
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _bad(f"'{name}' must be a finite number.", name)
    if not lo <= value <= hi:
        raise _bad(f"'{name}' must be between {lo:g} and {hi:g}; got {value:g}.", name)
    return float(value)


def _integer(body: dict[str, Any], name: str, default: int | None, lo: int, hi: int) -> int | None:
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(f"'{name}' must be an integer.", name)
    if not lo <= value <= hi:
        raise _bad(f"'{name}' must be between {lo} and {hi}; got {value}.", name)
    return value


def _text(value: Any, param: str) -> str:
    """Message content: a string, or the OpenAI list of parts of which only text parts are supported."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, list):
        out = []
        for part in value:
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise _bad("Only text content parts are supported by this model.", param)
            out.append(part["text"])
        return "".join(out)
    raise _bad(f"'{param}' must be a string or a list of text parts.", param)


def _function(obj: Any) -> dict[str, Any] | None:
    """The `function` object of a tool or a tool call, when it has a name; else None."""
    fn = obj.get("function") if isinstance(obj, dict) else None
    return fn if isinstance(fn, dict) and isinstance(fn.get("name"), str) and fn["name"] else None


def _tool_calls(value: Any, where: str) -> list[dict[str, Any]]:
    """An assistant turn's OpenAI `tool_calls`, with each call's JSON `arguments` string decoded into
    the object chat templates iterate over (as llama-server does)."""
    if not isinstance(value, list):
        raise _bad(f"{where} must be a list.", "messages")
    out = []
    for j, call in enumerate(value):
        fn = _function(call)
        if fn is None:
            raise _bad(f"{where}[{j}] must be {{\"type\": \"function\", \"function\": {{\"name\", \"arguments\"}}}}.",
                       "messages")
        args = fn.get("arguments", "{}")
        if isinstance(args, str):
            try:
                args = json.loads(args or "{}")
            except json.JSONDecodeError:
                raise _bad(f"{where}[{j}].function.arguments is not valid JSON.", "messages") from None
        if not isinstance(args, dict):
            raise _bad(f"{where}[{j}].function.arguments must be a JSON object.", "messages")
        out.append({"id": str(call.get("id") or f"call_{j}"), "type": "function",
                    "function": {"name": fn["name"], "arguments": args}})
    return out


def _messages(body: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise _bad("'messages' must be a non-empty list.", "messages")
    out = []
    for i, m in enumerate(raw):
        if not isinstance(m, dict):
            raise _bad(f"messages[{i}] must be an object.", "messages")
        role = m.get("role")
        if role not in ROLES:
            raise _bad(f"messages[{i}].role must be one of {', '.join(ROLES)}.", "messages")
        msg: dict[str, Any] = {"role": "system" if role == "developer" else role,
                               "content": _text(m.get("content"), f"messages[{i}].content")}
        if role == "assistant" and m.get("tool_calls"):
            msg["tool_calls"] = _tool_calls(m["tool_calls"], f"messages[{i}].tool_calls")
        if role == "tool" and isinstance(m.get("tool_call_id"), str):
            msg["tool_call_id"] = m["tool_call_id"]
        out.append(msg)
    return tuple(out)


def _tools(body: dict[str, Any]) -> tuple[dict[str, Any], ...] | None:
    """`tools` to show the model, or None. Forcing a call ("required", a named function) would need
    constrained decoding, which this server does not do: refused rather than silently not forced."""
    tools, choice = body.get("tools"), body.get("tool_choice", "auto")
    if tools is None or tools == []:
        return None
    if not isinstance(tools, list) or len(tools) > MAX_TOOLS:
        raise _bad(f"'tools' must be a list of up to {MAX_TOOLS} tools.", "tools")
    for i, tool in enumerate(tools):
        fn = _function(tool)
        if fn is None or tool.get("type") != "function":
            raise _bad(f"tools[{i}] must be {{\"type\": \"function\", \"function\": {{\"name\", ...}}}}.", "tools")
        if fn.get("parameters") is not None and not isinstance(fn["parameters"], dict):
            raise _bad(f"tools[{i}].function.parameters must be a JSON schema object.", "tools")
    if choice == "none":
        return None
    if choice != "auto":
        raise _bad("Only tool_choice \"auto\" and \"none\" are supported: this server cannot force the model to "
                   "call a tool; with \"auto\" it calls one when it decides to.", "tool_choice")
    return tuple(tools)


def _refuse_unsupported(body: dict[str, Any]) -> None:
    """Fields whose silent omission would hand a client something other than what it asked for."""
    fmt = body.get("response_format")
    if fmt is not None and not (isinstance(fmt, dict) and fmt.get("type") in (None, "text")):
        raise _bad("'response_format' other than text is not supported: this server cannot constrain the reply "
                   "to JSON or a schema. Ask for JSON in the prompt instead.", "response_format")
    if body.get("logprobs") or body.get("top_logprobs"):
        raise _bad("'logprobs' are not supported by this server.", "logprobs")


def _stops(body: dict[str, Any]) -> tuple[str, ...]:
    stop = body.get("stop")
    if stop is None:
        return ()
    stops = [stop] if isinstance(stop, str) else stop
    if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
        raise _bad("'stop' must be a string or a list of strings.", "stop")
    if len(stops) > MAX_STOP_STRINGS or any(len(s) > MAX_STOP_LENGTH for s in stops):
        raise _bad(f"'stop' takes up to {MAX_STOP_STRINGS} strings of up to {MAX_STOP_LENGTH} characters.", "stop")
    return tuple(s for s in stops if s)


def _thinking(body: dict[str, Any]) -> bool | None:
    kwargs = body.get("chat_template_kwargs")
    if kwargs is None:
        return None
    if not isinstance(kwargs, dict):
        raise _bad("'chat_template_kwargs' must be an object.", "chat_template_kwargs")
    value = kwargs.get("enable_thinking")
    if value is not None and not isinstance(value, bool):
        raise _bad("'chat_template_kwargs.enable_thinking' must be true or false.", "chat_template_kwargs")
    return value


def parse_request(body: Any, *, chat: bool, model_id: str, defaults: GenParams, n_ctx: int) -> ApiRequest:
    """Validate a decoded JSON body; raises ApiError with the field at fault."""
    if not isinstance(body, dict):
        raise _bad("The request body must be a JSON object.")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("'model' is required: use the id that GET /v1/models lists.", "model")
    if model != model_id:
        raise ApiError(404, f"The model '{model}' does not exist here; this server runs '{model_id}'.",
                       code="model_not_found", param="model")
    limit = max(1, n_ctx - 1)
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    sampling = Sampling(
        max_tokens=_integer({"max_tokens": max_tokens}, "max_tokens", defaults.max_tokens, 1, 1 << 31) or 1,
        temperature=_number(body, "temperature", defaults.temperature, 0.0, 2.0),
        top_p=_number(body, "top_p", defaults.top_p, 0.0, 1.0),
        top_k=int(_integer(body, "top_k", defaults.top_k, 0, 1 << 20) or 0),
        min_p=_number(body, "min_p", defaults.min_p, 0.0, 1.0),
        seed=_integer(body, "seed", None, 0, 2**32 - 1),
    )
    if sampling.max_tokens > limit:
        sampling = replace(sampling, max_tokens=limit)
    n = body.get("n", 1)
    if n != 1:
        raise _bad("Only n = 1 is supported.", "n")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise _bad("'stream' must be true or false.", "stream")
    opts = body.get("stream_options") or {}
    if not isinstance(opts, dict):
        raise _bad("'stream_options' must be an object.", "stream_options")
    include_usage = bool(opts.get("include_usage", False))
    _refuse_unsupported(body)
    common = dict(model=model, sampling=sampling, stream=stream, include_usage=include_usage, stop=_stops(body))
    if chat:
        messages, prefill = _messages(body), ""
        if len(messages) > 1 and messages[-1]["role"] == "assistant" and "tool_calls" not in messages[-1]:
            messages, prefill = messages[:-1], messages[-1]["content"]
        return ApiRequest(**common, messages=messages, enable_thinking=_thinking(body), tools=_tools(body),
                          prefill=prefill)
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if not isinstance(prompt, str) or not prompt:
        raise _bad("'prompt' must be a non-empty string.", "prompt")
    return ApiRequest(**common, prompt=prompt)


def usage(n_prompt: int, n_generated: int) -> dict[str, int]:
    return {"prompt_tokens": n_prompt, "completion_tokens": n_generated, "total_tokens": n_prompt + n_generated}


def timings(stats: Any) -> dict[str, float | int]:
    """llama-server's `timings` object, from the engine's GenStats, DFlash counts included."""
    prompt_ms = 1000.0 * stats.prefill_seconds
    predicted_ms = 1000.0 * stats.generate_seconds
    n_new = max(0, stats.n_prompt - stats.n_prompt_cached)
    return {
        "cache_n": stats.n_prompt_cached,
        "prompt_n": n_new,
        "prompt_ms": round(prompt_ms, 3),
        "prompt_per_token_ms": round(prompt_ms / n_new, 3) if n_new else 0.0,
        "prompt_per_second": round(1000.0 * n_new / prompt_ms, 3) if prompt_ms > 0 else 0.0,
        "predicted_n": stats.n_generated,
        "predicted_ms": round(predicted_ms, 3),
        "predicted_per_token_ms": round(predicted_ms / stats.n_generated, 3) if stats.n_generated else 0.0,
        "predicted_per_second": round(stats.tokens_per_second, 3),
        "draft_n": stats.n_drafted,
        "draft_n_accepted": stats.n_accepted,
        # what the adaptive draft length did (not in llama-server's object): steps that drafted,
        # plain target steps, and the mean drafted tokens per drafting step
        "draft_steps": stats.n_draft_steps,
        "plain_steps": max(stats.n_steps - 1 - stats.n_draft_steps, 0),
        "draft_mean_length": round(stats.mean_draft_length, 3),
    }


def finish_reason(reason: str) -> str:
    """Engine stop reasons -> OpenAI's: eos and stop strings are 'stop', the token limits 'length'."""
    return "length" if reason in ("length", "context") else "stop"
