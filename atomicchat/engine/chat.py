"""Chat prompts from the GGUF's own Jinja chat template, rendered in a sandbox as transformers does.

When a file carries no template, a known format for its architecture is used (Gemma turns), else
ChatML. `enable_thinking` is passed through: Qwen3.5's template reads it, others ignore it.
"""

from __future__ import annotations

import datetime
import json
import re
from functools import lru_cache
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from atomicchat.engine.errors import EngineError

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

GEMMA = (
    "{{ bos_token }}{% set sys = namespace(text='') %}"
    "{% for m in messages %}{% if m['role'] == 'system' %}{% set sys.text = m['content'] + '\n\n' %}"
    "{% else %}<start_of_turn>{{ 'model' if m['role'] == 'assistant' else 'user' }}\n"
    "{% if m['role'] == 'user' and sys.text %}{{ sys.text }}{% set sys.text = '' %}{% endif %}"
    "{{ m['content'] | trim }}<end_of_turn>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)

FALLBACKS = {"gemma": GEMMA, "gemma2": GEMMA, "gemma3": GEMMA, "gemma3n": GEMMA}


class TemplateError(EngineError):
    """The model's chat template failed to render."""


class TemplateRefusal(TemplateError):
    """The template's own raise_exception(): it works, and this conversation breaks its rules."""


def _raise(message: str) -> None:
    raise TemplateRefusal(f"The model's chat template refused the conversation: {message}")


def _tojson(value: Any, indent: int | None = None, ensure_ascii: bool = False, **_: Any) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=ensure_ascii)


TIME_BUDGET_S = 2.0  # a chat template renders in milliseconds; more is a loop bomb
OUTPUT_BUDGET = 1 << 20  # 1 MiB of prompt text from the template itself (message contents excluded)
_WIDTH_METHODS = {"center", "ljust", "rjust", "zfill", "expandtabs"}
_BIG_NUMBER = re.compile(r"\d{7,}")  # a width or precision in a format string of a million or more


def _check_format(fmt: Any) -> None:
    if isinstance(fmt, str) and any(int(m.group(0)) > OUTPUT_BUDGET for m in _BIG_NUMBER.finditer(fmt)):
        raise _Budget("the chat template formats a text wider than 1 MiB")


class _Budget(TemplateError):
    pass


def _size(x: Any) -> int:
    return len(x) if isinstance(x, str | bytes | list | tuple) else 0


class _BoundedSandbox(ImmutableSandboxedEnvironment):
    """The sandbox (no attribute escapes) plus bounds on what it lets a template compute: powers,
    repetition and padding widths that would take minutes or gigabytes are refused up front."""

    intercepted_binops = frozenset(["*", "**", "%"])

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**":
            if isinstance(right, int) and isinstance(left, int | float) and abs(right) > 256 and abs(left) > 1:
                raise _Budget(f"the chat template computes {left!r} ** {right!r}, which is too large")
            return left**right
        if operator == "%":
            _check_format(left)
            return left % right
        if operator == "*":
            n = right if isinstance(right, int) else left if isinstance(left, int) else 1
            seq = _size(left) or _size(right)
            if seq and isinstance(n, int) and seq * n > OUTPUT_BUDGET:
                raise _Budget("the chat template repeats a text beyond 1 MiB")
            return left * right
        return super().call_binop(context, operator, left, right)

    def wrap_str_format(self, value: Any) -> Any:
        if getattr(value, "__name__", "") in ("format", "format_map"):
            _check_format(getattr(value, "__self__", None))
        return super().wrap_str_format(value)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        name = getattr(__obj, "__name__", "")
        if name in ("format", "format_map") and isinstance(getattr(__obj, "__self__", None), str):
            _check_format(__obj.__self__)
        if name in _WIDTH_METHODS and isinstance(getattr(__obj, "__self__", None), str):
            width = args[0] if args else kwargs.get("width", 0)
            if isinstance(width, int) and width > OUTPUT_BUDGET:
                raise _Budget(f"the chat template pads a text to {width:,} characters")
        return super().call(__context, __obj, *args, **kwargs)


def _bounded_int(value: Any, cap: int) -> Any:
    return min(value, cap) if isinstance(value, int) else value


@lru_cache(maxsize=8)
def _compile(source: str) -> jinja2.Template:
    env = _BoundedSandbox(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.globals.pop("lipsum", None)  # generates text without bound; no chat template needs it
    env.filters["tojson"] = lambda v, indent=None, **kw: _tojson(v, _bounded_int(indent, 16), **kw)
    plain_indent = env.filters["indent"]
    env.filters["indent"] = lambda s, width=4, *a, **kw: plain_indent(s, _bounded_int(width, 64), *a, **kw)
    plain_center = env.filters["center"]
    env.filters["center"] = lambda s, width=80: plain_center(s, _bounded_int(width, 4096))
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = lambda fmt: datetime.datetime.now().strftime(fmt)
    try:
        return env.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"The model's chat template is invalid (line {exc.lineno}: {exc.message}).") from exc


def pick_template(gguf_template: str | None, arch: str) -> str:
    if gguf_template and gguf_template.strip():
        return gguf_template
    return FALLBACKS.get(arch, CHATML)


def render(
    template: str,
    messages: list[dict[str, str]],
    *,
    bos_token: str = "",
    eos_token: str = "",
    add_generation_prompt: bool = True,
    enable_thinking: bool | None = None,
) -> str:
    kwargs: dict[str, Any] = {
        "messages": messages,
        "add_generation_prompt": add_generation_prompt,
        "bos_token": bos_token,
        "eos_token": eos_token,
        "tools": None,
    }
    if enable_thinking is not None:
        kwargs["enable_thinking"] = enable_thinking
    budget = OUTPUT_BUDGET + sum(len(str(m.get("content", ""))) for m in messages)
    try:
        return _render_bounded(_compile(template), kwargs, budget)
    except _Budget as exc:
        raise TemplateError(f"The model's chat template was stopped: {exc}.") from exc
    except TemplateError:
        raise
    except jinja2.TemplateError as exc:
        raise TemplateError(f"The model's chat template failed to render: {exc}.") from exc
    except (RecursionError, MemoryError, OverflowError, ZeroDivisionError, ArithmeticError, TypeError, ValueError,
            KeyError, IndexError, AttributeError, RuntimeError) as exc:
        raise TemplateError(f"The model's chat template failed to render ({type(exc).__name__}: {exc}).") from exc


def _render_bounded(tpl: jinja2.Template, kwargs: dict[str, Any], budget: int) -> str:
    """Render chunk by chunk with a deadline and an output cap. A trace hook on this thread checks
    the deadline inside the template's own loops, which may print nothing for a long time."""
    import sys
    import time

    deadline = time.monotonic() + TIME_BUDGET_S
    ticks = [0]

    def line_hook(frame: Any, event: str, arg: Any) -> Any:
        ticks[0] += 1
        if ticks[0] % 512 == 0 and time.monotonic() > deadline:
            raise _Budget(f"it ran for more than {TIME_BUDGET_S:g} s")
        return line_hook

    def call_hook(frame: Any, event: str, arg: Any) -> Any:
        return line_hook if frame.f_code.co_filename.startswith("<template>") else None

    out: list[str] = []
    size = 0
    previous = sys.gettrace()
    sys.settrace(call_hook)
    try:
        for chunk in tpl.generate(**kwargs):
            size += len(chunk)
            if size > budget:
                raise _Budget("it produced more than 1 MiB of text")
            if time.monotonic() > deadline:
                raise _Budget(f"it ran for more than {TIME_BUDGET_S:g} s")
            out.append(chunk)
    finally:
        sys.settrace(previous)
    return "".join(out)
