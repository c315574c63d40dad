"""Chat templates are code from strangers: bounded in time and size, every failure one TemplateError,
and a model whose template is a bomb loads with the built-in template and says so once."""

from __future__ import annotations

import time

import pytest

from atomicchat.engine import Engine, EngineConfig
from atomicchat.engine.chat import CHATML, GEMMA, TemplateError, render
from atomicchat.engine.tiny_models import TargetSpec, write_target

M = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]

HOSTILE = {
    "nested loops": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "huge power": "{{ 10**(10**10) }}",
    "lipsum": "{{ lipsum(1000000) }}",
    "repeat": "{{ 'a'*10**10 }}",
    "center": "{{ 'a'.center(10**10) }}",
    "zfill": "{{ 'a'.zfill(10000000000) }}",
    "format width": "{{ '{:>1000000000}'.format('a') }}",
    "percent width": "{{ '%1000000000s' % 'a' }}",
    "output flood": "{% for i in range(100000) %}{% for j in range(100000) %}xxxxxxxxxx{% endfor %}{% endfor %}",
    "recursion": "{% macro f(n) %}{{ f(n+1) }}{% endmacro %}{{ f(0) }}",
    "zero division": "{{ 1/0 }}",
    "overflow": "{{ (2**1000)|float }}",
    "include": "{% include 'other.jinja' %}",
    "escape": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_template_ends_quickly_with_one_error_type(name):
    t0 = time.monotonic()
    with pytest.raises(TemplateError, match="chat template"):
        render(HOSTILE[name], M)
    assert time.monotonic() - t0 < 3.5


def test_capped_filters_stay_small():
    assert len(render("{{ messages|tojson(indent=1000000000) }}", M)) < 2000
    assert len(render("{{ 'a'|center(10000000000) }}", M)) <= 4096


@pytest.mark.parametrize("template", [CHATML, GEMMA])
def test_real_templates_render_as_before(template):
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    plain = env.from_string(template).render(messages=M, add_generation_prompt=True, bos_token="<s>", eos_token="",
                                             tools=None)
    assert render(template, M, bos_token="<s>") == plain and isinstance(jinja2.__version__, str)


def test_a_model_whose_template_is_a_bomb_loads_with_chatml_and_says_so(tmp_path):
    bomb = HOSTILE["nested loops"]
    path = write_target(tmp_path / "bomb.gguf", TargetSpec(chat_template=bomb))
    t0 = time.monotonic()
    with Engine(EngineConfig(path, None, n_ctx=256, n_threads=1)) as eng:
        assert time.monotonic() - t0 < 10
        assert any("ChatML template is used instead" in n and "more than 2 s" in n for n in eng.info.notes)
        assert eng.render_chat([{"role": "user", "content": "hi"}]).startswith("<|im_start|>user\nhi")
