"""A scripted stand-in for atomicchat.engine.Engine: same calls, same event types, no llama.cpp.

The real engine with tiny random models drives most UI tests; this one covers what random
weights cannot: a known text (markdown, code), a controllable pace for Stop, draft acceptance
patterns for the indicator, and failures in the middle of a reply.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from atomicchat.engine.errors import DecodeError
from atomicchat.engine.types import EngineInfo, Finished, GenParams, GenStats, Step


@dataclass
class Script:
    """What the next generations produce. `texts` rotate per call; each piece is one step."""

    texts: list[str] = field(default_factory=lambda: ["Hello! Here is **bold** text.\n\n```python\nprint('hi')\n```\n"])
    piece: int = 3  # characters per step
    step_delay: float = 0.0  # seconds per step
    accept_pattern: tuple[int, ...] = (3, 0, 5, 1)  # accepted draft tokens per step (cycled)
    draft_max: int = 7
    finish_reason: str = "eos"  # what the reply ends with when its text is out ("repetition": a loop was cut)
    plain_only: bool = False  # with a draft: every step plain, as the adaptive policy does where drafting cannot pay
    fail_after_steps: int | None = None  # raise DecodeError after this many steps
    load_error: Exception | None = None
    prompt_end: str = "<|im_start|>assistant\n"  # the prompt's last tokens as text ("...<think>\n": thinking opened)
    calls: list[dict] = field(default_factory=list)  # what generate() was asked
    tokenized: list[str] = field(default_factory=list)  # texts tokenize() was given (a reply to go on from)


class FakeEngine:
    def __init__(self, config, script: Script) -> None:
        if script.load_error is not None:
            raise script.load_error
        self.config = config
        self.script = script
        has_draft = config.draft_path is not None
        self.info = EngineInfo(
            target_name=Path(config.target_path).stem,
            target_path=Path(config.target_path),
            draft_name=Path(config.draft_path).stem if has_draft else None,
            draft_path=Path(config.draft_path) if has_draft else None,
            block_size=script.draft_max + 1 if has_draft else 0,
            draft_max=script.draft_max if has_draft else 0,
            n_ctx=config.n_ctx,
            device="CPU",
            gpu_layers_used=0,
            has_chat_template=True,
            is_hybrid=False,
            n_vocab=512,
        )
        self.n_ctx = config.n_ctx
        self.closed = False
        self._n = 0

    def chat_prompt(self, messages: list[dict[str, str]], enable_thinking: bool | None = None,
                    tools: list[dict] | None = None) -> list[int]:
        self.script.calls.append({"messages": messages, "enable_thinking": enable_thinking})
        return list(range(sum(len(m["content"]) for m in messages) // 4 + 1))

    def detokenize(self, tokens: list[int]) -> str:
        return self.script.prompt_end

    def tokenize(self, text: str, add_special: bool = True) -> list[int]:
        self.script.tokenized.append(text)
        return list(range(len(text) // 4 + 1))

    def generate(
        self, tokens: list[int], params: GenParams, should_stop: Callable[[], bool] = lambda: False
    ) -> Iterator[Step | Finished]:
        s = self.script
        text = s.texts[self._n % len(s.texts)]
        self._n += 1
        s.calls[-1]["params"] = params
        stats = GenStats(n_prompt=len(tokens))
        use_draft = params.use_draft and self.info.draft_name is not None
        drafts = use_draft and not s.plain_only
        t0 = time.perf_counter()
        pos, step = 0, 0
        while pos < len(text):
            if should_stop():
                yield Finished("cancelled", replace(stats))
                return
            if s.fail_after_steps is not None and step >= s.fail_after_steps:
                raise DecodeError("llama.cpp failed while evaluating a batch (test failure).")
            acc = s.accept_pattern[step % len(s.accept_pattern)] if drafts else 0
            n_tok = acc + 1
            piece = text[pos : pos + s.piece * n_tok]
            pos += len(piece)
            if s.step_delay:
                time.sleep(s.step_delay)
            stats.n_generated += n_tok
            stats.n_steps += 1
            if drafts:
                stats.n_drafted += s.draft_max
                stats.n_accepted += acc
                stats.n_draft_steps += 1
                stats.draft_seconds += 0.0002
                stats.verify_seconds += 0.0008
            stats.generate_seconds = max(time.perf_counter() - t0, 1e-6)
            yield Step(
                list(range(n_tok)),
                piece,
                [True] * acc + [False],
                s.draft_max if drafts else 0,
                acc,
                replace(stats),
                draft_chars=len(piece) * acc // n_tok,
            )
            step += 1
        yield Finished(s.finish_reason, replace(stats), text=text)

    def reset(self) -> None:
        """Empty the caches: the fake keeps none."""

    def close(self) -> None:
        self.closed = True


def factory(script: Script) -> Callable:
    def make(config, progress):
        progress("target", 1.0)
        return FakeEngine(config, script)

    return make
