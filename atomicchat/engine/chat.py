"""Chat prompts from the GGUF's own Jinja chat template, rendered in a sandbox as transformers does.

When a file carries no template, a known format for its architecture is used (Gemma turns), else
ChatML. `enable_thinking` is passed through: Qwen3.5's template reads it, others ignore it.
"""

from __future__ import annotations

import datetime
import json
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


def _raise(message: str) -> None:
    raise TemplateError(f"The model's chat template refused the conversation: {message}")


def _tojson(value: Any, indent: int | None = None, ensure_ascii: bool = False, **_: Any) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=ensure_ascii)


@lru_cache(maxsize=8)
def _compile(source: str) -> jinja2.Template:
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = _tojson
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
    try:
        return _compile(template).render(**kwargs)
    except TemplateError:
        raise
    except jinja2.TemplateError as exc:
        raise TemplateError(f"The model's chat template failed to render: {exc}.") from exc
