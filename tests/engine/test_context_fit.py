"""Long chats keep working: the oldest turns are left out to fit the context window."""

from __future__ import annotations

import pytest

from atomicchat.engine import ContextFullError
from atomicchat.engine.context_fit import fit_chat
from tests.engine.helpers import engine


def _chat(n_turns: int, words: int) -> list[dict[str, str]]:
    msgs = [{"role": "system", "content": "be brief"}]
    for i in range(n_turns):
        msgs.append({"role": "user", "content": f"question {i} " + "word " * words})
        msgs.append({"role": "assistant", "content": f"answer {i} " + "word " * words})
    msgs.append({"role": "user", "content": "last question"})
    return msgs


def test_short_chat_untouched(llama_pair):
    with engine(llama_pair.target, n_ctx=256) as eng:
        msgs = _chat(1, 3)
        toks, dropped = fit_chat(eng, msgs, reserve=32)
        assert dropped == 0
        assert toks == eng.chat_prompt(msgs)


def test_long_chat_drops_oldest_turns(llama_pair):
    with engine(llama_pair.target, n_ctx=256) as eng:
        msgs = _chat(30, 10)
        assert len(eng.chat_prompt(msgs)) > eng.n_ctx
        toks, dropped = fit_chat(eng, msgs, reserve=64)
        assert 0 < dropped < len(msgs) - 2
        assert len(toks) <= eng.n_ctx - 64
        text = eng.detokenize(toks)
        kept = [m for m in msgs if m["role"] == "system"] + msgs[1 + dropped :]
        assert kept[1]["role"] == "user"
        assert toks == eng.chat_prompt(kept)
        # dropping one turn fewer would not fit
        longer = [msgs[0]] + msgs[1 + dropped - 2 :]
        assert len(eng.chat_prompt(longer)) > eng.n_ctx - 64
        assert text


def test_last_message_too_long(llama_pair):
    with engine(llama_pair.target, n_ctx=256) as eng:
        msgs = [{"role": "user", "content": "word " * 2000}]
        with pytest.raises(ContextFullError, match="last message alone"):
            fit_chat(eng, msgs, reserve=16)
