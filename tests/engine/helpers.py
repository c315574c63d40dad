"""Small helpers shared by the engine tests."""

from __future__ import annotations

from pathlib import Path

from atomicchat.engine import Engine, EngineConfig, Finished, GenParams, Step


def engine(target: Path, draft: Path | None = None, **kw) -> Engine:
    """An engine on test models. The draft's confidence cut is off unless asked for (draft_p_min=None:
    the engine's default): the generated tiny drafts have random weights, so every drafted token is a
    doubt and the cut would turn each DFlash step these tests exercise into a plain one. The cut has
    its own tests (test_draft_confidence.py, test_smollm2_dflash.py)."""
    kw.setdefault("n_ctx", 1024)
    kw.setdefault("draft_p_min", 0.0)
    return Engine(EngineConfig(target_path=target, draft_path=draft, **kw))


def run(eng: Engine, prompt: list[int], **params) -> tuple[list[int], Finished, list[Step]]:
    steps: list[Step] = []
    final = None
    for ev in eng.generate(prompt, GenParams(**params)):
        if isinstance(ev, Step):
            steps.append(ev)
        else:
            final = ev
    assert final is not None
    toks = [t for s in steps for t in s.tokens]
    assert toks == final.tokens
    return toks, final, steps


class Schedule:
    """A policy that drafts the given lengths in turn (0 = a plain step), clamped by the engine's limit."""

    def __init__(self, ks: list[int], feed: bool = True) -> None:
        self.ks, self.i, self.seen, self.feed = ks, 0, [], feed

    def choose(self, limit: int) -> int:
        k = min(limit, self.ks[self.i % len(self.ks)])
        self.i += 1
        self.seen.append(k)
        return k

    def coast(self, limit: int) -> bool:
        """Unfed plain steps are taken the way the engine coasts through a plain run."""
        if self.feed or self.ks[self.i % len(self.ks)] != 0:
            return False
        self.choose(limit)
        return True

    def needs_features(self) -> bool:
        return self.feed

    def begin_reply(self) -> None:
        pass

    def overhead(self, seconds: float) -> None:
        pass

    def record(self, k: int, n_accepted: int, draft_seconds: float, verify_seconds: float, fed: bool = True,
               asked: int | None = None) -> None:
        pass


def install_oracle(eng: Engine, prompt: list[int], reference: list[int], corrupt_every: int = 3) -> None:
    """Replace the draft's guesses with the target's own greedy continuation, one token in
    `corrupt_every` blocks corrupted, so acceptance is partial in a known pattern. The real draft
    pass still runs, so the draft cache stays exactly as in production."""
    real = eng._draft_block
    calls = {"n": 0}

    def oracle(id_last: int, pos: int, n_max: int, n_use: int) -> list[int]:
        real(id_last, pos, n_max, n_use)
        k = pos - len(prompt) + 1
        guess = list(reference[k : k + n_use])
        guess += [0] * (n_use - len(guess))
        calls["n"] += 1
        if calls["n"] % corrupt_every == 0 and guess:
            i = (calls["n"] // corrupt_every) % len(guess)
            guess[i] = (guess[i] + 1) % eng.n_vocab
        return guess

    eng._draft_block = oracle  # type: ignore[method-assign]


def gguf_arch(reader) -> str:
    """general.architecture of a gguf.GGUFReader."""
    f = reader.fields["general.architecture"]
    return bytes(f.parts[f.data[0]]).decode()


def gguf_tokens(reader) -> list[str]:
    """The token list of a gguf.GGUFReader."""
    f = reader.fields["tokenizer.ggml.tokens"]
    return [bytes(f.parts[i]).decode() for i in f.data]


def lossless_totals(base: Engine, spec: Engine, texts: list[str], max_tokens: int, **params) -> tuple[int, int, int]:
    """Greedy replies to each chat text, target-only on `base` and DFlash on `spec`: asserts they are
    the same tokens; returns (drafted, accepted, draft steps) summed over the texts."""
    drafted = accepted = steps = 0
    for text in texts:
        prompt = spec.chat_prompt([{"role": "user", "content": text}])
        base.reset()
        ref, _, _ = run(base, prompt, max_tokens=max_tokens)
        spec.reset()
        got, fin, _ = run(spec, prompt, max_tokens=max_tokens, **params)
        assert got == ref, text
        drafted += fin.stats.n_drafted
        accepted += fin.stats.n_accepted
        steps += fin.stats.n_draft_steps
    return drafted, accepted, steps
