"""Chat prompts from the GGUF's own Jinja chat template, rendered in a sandbox as transformers does.

When a file carries no template (usually a base model), ChatML is used as llama-server does, except
for Gemma architectures, whose turns are known. A template that fails or exceeds its budgets (see
template_sandbox) is replaced by that same fallback. `enable_thinking` is passed through: Qwen3.5's
template reads it, others ignore it.
"""

from __future__ import annotations

import datetime
import json
import re
import secrets
from functools import lru_cache
from typing import Any

import jinja2

from atomicchat.engine.errors import PromptRefused
from atomicchat.engine.template_sandbox import OUTPUT_BUDGET, BoundedSandbox, TemplateError, render_bounded

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


THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


def opens_thinking(engine: Any, prompt: list[int]) -> bool:
    """Whether the prompt ends inside an opened <think> block: Qwen3.5's template (and R1-style ones)
    put "<think>\n" at the end of the generation prompt when thinking is on, so the reply begins with
    the reasoning and its first "</think>" ends it. `engine` is anything with `detokenize`."""
    return bool(prompt) and engine.detokenize(prompt[-4:]).rstrip().endswith(THINK_OPEN)


def with_reply_start(engine: Any, prompt: list[int], start: str,
                     start_tokens: list[int] | None = None) -> tuple[list[int], bool]:
    """`prompt` followed by the start of the reply (the app's Continue, the API's prefill), and whether
    the reply goes on inside a <think> block. A start that begins with the "<think>\n" the template
    already put at the prompt's end (the app gives a reply that tag) does not repeat it.
    `start_tokens`: `start` tokenized already (without special tokens), if the caller has them."""
    opened = opens_thinking(engine, prompt)
    if opened and start.startswith(THINK_OPEN + "\n"):
        start, start_tokens = start[len(THINK_OPEN) + 1 :], None
    if start and start_tokens is None:
        start_tokens = engine.tokenize(start, add_special=False)
    return prompt + (start_tokens or []), opened and THINK_CLOSE not in start


class TemplateRefusal(TemplateError, PromptRefused):
    """The template itself called raise_exception: it rejects this conversation (kept, no fallback)."""


def _raise(message: str) -> None:
    raise TemplateRefusal(f"The model's chat template refused the conversation: {message}")


def _tojson(value: Any, indent: int | None = None, ensure_ascii: bool = False, **_: Any) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=ensure_ascii)


@lru_cache(maxsize=8)
def _compile(source: str) -> tuple[jinja2.Template, BoundedSandbox]:
    env = BoundedSandbox(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = env._bounded_filter(_tojson)
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = lambda fmt: datetime.datetime.now().strftime(str(fmt)[:200])
    try:
        return env.from_string(source), env
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"The model's chat template is invalid (line {exc.lineno}: {exc.message}).") from exc
    except Exception as exc:  # RecursionError on absurd nesting, MemoryError, ...
        raise TemplateError(f"The model's chat template could not be compiled ({type(exc).__name__}).") from None


def fallback_template(arch: str) -> str:
    """The built-in template for an architecture: Gemma turns for gemma*, ChatML (llama-server's choice) else."""
    return FALLBACKS.get(arch, CHATML)


def pick_template(gguf_template: str | None, arch: str) -> str:
    if gguf_template and gguf_template.strip():
        return gguf_template
    return fallback_template(arch)


def render(
    template: str,
    messages: list[dict[str, Any]],
    *,
    bos_token: str = "",
    eos_token: str = "",
    add_generation_prompt: bool = True,
    enable_thinking: bool | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> str:
    """`tools` are OpenAI tool objects ({"type": "function", "function": {...}}), as transformers
    passes them; a template without a place for them ignores them (see `takes_tools`)."""
    kwargs: dict[str, Any] = {
        "messages": messages,
        "add_generation_prompt": add_generation_prompt,
        "bos_token": bos_token,
        "eos_token": eos_token,
        "tools": tools or None,
    }
    if enable_thinking is not None:
        kwargs["enable_thinking"] = enable_thinking
    compiled, env = _compile(template)
    content = sum(len(str(m.get("content", ""))) + len(str(m.get("tool_calls") or "")) for m in messages)
    content += len(json.dumps(tools)) if tools else 0
    return render_bounded(compiled, env, max(OUTPUT_BUDGET, 4 * content + 65536), **kwargs)


_PROBE_TOOL = {"type": "function", "function": {"name": "probe_tool", "description": "Probe.",
                                                  "parameters": {"type": "object", "properties": {}}}}


@lru_cache(maxsize=8)
def takes_tools(template: str) -> bool:
    """Whether the template shows tools to the model: one user turn rendered with a tool and without
    differs. ChatML and most small models' templates ignore tools, and a client must be told."""
    probe = [{"role": "user", "content": "Hello"}]
    try:
        return render(template, probe, tools=[_PROBE_TOOL]) != render(template, probe)
    except TemplateError:
        return False


def render_parts(template: str, messages: list[dict[str, Any]], **kwargs: Any) -> list[tuple[str, bool]]:
    """The rendered prompt as (text, is_markup) pieces: message contents apart from the template's own
    markup, so that typed text such as "<|im_start|>" can be tokenized as text, not control tokens.

    The template is rendered twice, once with sentinels in place of the contents; the real render
    must equal the markup pieces with each content (as is, or trimmed) between them. When it does not
    (a template that inspects or rewrites contents), the whole text comes back as one markup piece."""
    real = render(template, messages, **kwargs)
    tag = secrets.token_hex(6)
    # empty contents stay empty: a template may test them (an assistant turn holding only tool calls)
    masked = [dict(m, content=f"\ue000{tag}{i}\ue001") if m.get("content") else m for i, m in enumerate(messages)]
    try:
        pieces = re.split(f"\ue000{tag}(\\d+)\ue001", render(template, masked, **kwargs))
    except TemplateError:
        return [(real, True)]
    out: list[tuple[str, bool]] = []
    p = 0
    for k in range(0, len(pieces), 2):
        markup = pieces[k]
        if not real.startswith(markup, p):
            return [(real, True)]
        out.append((markup, True))
        p += len(markup)
        if k + 1 >= len(pieces):
            break
        content = str(messages[int(pieces[k + 1])].get("content", ""))
        nxt = pieces[k + 2]
        for cand in (content, content.strip(), content.rstrip(), content.lstrip()):
            if real.startswith(cand, p) and real.startswith(nxt, p + len(cand)):
                break
        else:
            return [(real, True)]
        out.append((cand, False))
        p += len(cand)
    return out if p == len(real) else [(real, True)]
