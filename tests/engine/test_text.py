"""Prompt rendering, tokenisation and incremental decoding; the real SmolLM2-135M-Instruct model."""

from __future__ import annotations

import pytest

from atomicchat.engine import GenParams
from atomicchat.engine import chat
from atomicchat.engine.detok import Detokenizer
from tests.engine.helpers import engine, run
from tests.gguf_factory import TargetSpec, write_draft, write_target

THINK_TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}{% endfor %}"
    "{% if enable_thinking is defined %}[thinking={{ enable_thinking }}]{% endif %}"
)


def test_detokenizer_joins_multibyte_characters():
    pieces = {1: "h".encode(), 2: "é".encode()[:1], 3: "é".encode()[1:], 4: "🙂".encode()[:2], 5: "🙂".encode()[2:]}
    d = Detokenizer(lambda t: pieces[t])
    out = [d.feed([1]), d.feed([2]), d.feed([3]), d.feed([4]), d.feed([5])]
    assert out == ["h", "", "é", "", "🙂"]
    assert d.flush() == ""


def test_detokenizer_flushes_broken_tail():
    d = Detokenizer(lambda t: "é".encode()[:1])
    assert d.feed([1]) == ""
    assert d.flush() == "\ufffd"


def test_enable_thinking_false_when_draft_loaded(tmp_path):
    spec = TargetSpec(chat_template=THINK_TEMPLATE)
    t = write_target(tmp_path / "t.gguf", spec)
    d = write_draft(tmp_path / "d.gguf", spec)
    msgs = [{"role": "user", "content": "hi"}]
    with engine(t, d) as eng:
        assert eng.render_chat(msgs).endswith("[thinking=False]")
        assert eng.render_chat(msgs, enable_thinking=True).endswith("[thinking=True]")
    with engine(t) as eng:
        assert "[thinking" not in eng.render_chat(msgs)


def test_template_errors_are_plain(tmp_path):
    bad = TargetSpec(chat_template="{% if %}")
    t = write_target(tmp_path / "bad.gguf", bad)
    with pytest.raises(chat.TemplateError, match="invalid"):
        chat.render("{% if %}", [{"role": "user", "content": "x"}])
    with engine(t) as eng:  # the engine falls back to ChatML and says why, once
        assert eng.render_chat([{"role": "user", "content": "x"}]).startswith("<|im_start|>user\nx")
        assert [n for n in eng.info.notes if "invalid" in n and "ChatML" in n]
    raising = TargetSpec(chat_template="{{ raise_exception('roles must alternate') }}")
    t2 = write_target(tmp_path / "raise.gguf", raising)
    with engine(t2) as eng:
        with pytest.raises(chat.TemplateError, match="roles must alternate"):
            eng.render_chat([{"role": "user", "content": "x"}])


def test_template_is_sandboxed():
    with pytest.raises(chat.TemplateError):
        chat.render("{{ ''.__class__.__mro__[1].__subclasses__() }}", [])


def test_smollm2_real_text_through_chat_template(smollm2_path):
    with engine(smollm2_path, n_ctx=512) as eng:
        assert eng.info.draft_name is None
        text = eng.render_chat([{"role": "user", "content": "What is the capital of France?"}])
        assert text.startswith("<|im_start|>")  # the file's own ChatML template
        assert "<|im_start|>user\nWhat is the capital of France?<|im_end|>" in text
        assert text.endswith("<|im_start|>assistant\n")
        prompt = eng.chat_prompt([{"role": "user", "content": "What is the capital of France?"}])
        plain = text.replace("<|im_start|>", "").replace("<|im_end|>", "")
        assert eng.detokenize(prompt) == plain  # the markers became special tokens, not spelled-out text
        toks, fin, steps = run(eng, prompt, max_tokens=24)
    assert fin.stats.n_generated == len(toks) > 0
    words = [w for w in fin.text.split() if w.isalpha()]
    assert len(words) >= 2, fin.text  # real words, not byte soup
    assert "\ufffd" not in fin.text
    assert "".join(s.text for s in steps) == fin.text


def test_smollm2_sampling_seeded(smollm2_path):
    with engine(smollm2_path, n_ctx=256) as eng:
        p = eng.tokenize("The sea is", add_special=True)
        a = [t for ev in eng.generate(p, GenParams(max_tokens=12, temperature=0.8, seed=3)) for t in getattr(ev, "tokens", [])]
        eng.reset()
        b = [t for ev in eng.generate(p, GenParams(max_tokens=12, temperature=0.8, seed=3)) for t in getattr(ev, "tokens", [])]
    assert a == b and len(a) > 0
