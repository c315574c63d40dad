"""On-device token selection: llama.cpp samples inside the graph, so no logits row comes to the host.

With Qwen3.5's 248,320-token vocabulary a DFlash step would otherwise copy up to 16 draft rows and 16
verify rows of logits to the host (~1 MB each) and take argmax (or run the sampler chain) in numpy
on every one. On a GPU, where a 16-token verify of a 9B model takes ~10 ms, that host work is a
fifth to a half of the step. llama.cpp (this commit) can attach a sampler chain to a context
(`llama_set_sampler`); the decode then copies one sampled token per output row instead of the logits
(`needs_raw_logits` is false), read back with `llama_get_sampled_token_ith`.

Exactness: each verify row's token is sampled from the target's own distribution for that prefix,
as on the host, so output stays the target's: identical under greedy and top_k=1, the same
distribution otherwise (the random stream differs from the host sampler's).
It is off unless asked for (EngineConfig.device_sampling, $ATOMICCHAT_DEVICE_SAMPLING=1): measured
slower than the host path on the CPU backend and, on an H200, slower per step although it removes
most of the host's work (`wanted` has the figures): there the host path's copies and argmax took
about 1 ms of a 16-row step and the in-graph sampler nodes added more than that to the decode.
"""

from __future__ import annotations

import os

from atomicchat.engine.errors import DecodeError, EngineError
from atomicchat.engine.lib import C
from atomicchat.engine.sampler_chain import chain_for
from atomicchat.engine.types import GenParams


def wanted(setting: bool | None, gpu_layers_used: int) -> bool:
    """Whether to sample on the device: the setting, else $ATOMICCHAT_DEVICE_SAMPLING (0/1), else no.

    Off by default on every backend, by measurement. On the CPU an in-graph argmax made a 16-row
    verify 2x slower. On an NVIDIA H200 (CUDA build of this llama.cpp, every layer offloaded) it cut
    the host's work per step at vocab 248,320 from 1,014 to 234 us, but the sampler nodes added more
    inside llama_decode than that saved: 3.79 vs 2.85 ms per 16-row DFlash step, and on the
    Qwen3.5-9B stand-in 58.7 vs 61.9 tok/s (DFlash, pinned 15) and 216.5 vs 218.4 (target alone).
    `gpu_layers_used` stays in the signature so a backend where it pays can turn it on here."""
    del gpu_layers_used
    if setting is not None:
        return setting
    env = os.environ.get("ATOMICCHAT_DEVICE_SAMPLING", "").strip()
    if env in ("0", "1"):
        return env == "1"
    return False


class DeviceSampler:
    """The chain attached to one context (sequence 0); `use()` swaps it, `token(i)` reads row i."""

    def __init__(self, ctx_ptr) -> None:  # noqa: ANN001
        self.ctx = ctx_ptr
        self.chain = None
        self._get = C().llama_get_sampled_token_ith
        self.use(None)

    def use(self, params: GenParams | None, seed: int = 0xFFFFFFFF) -> None:
        c = C()
        chain = chain_for(params, seed)
        if not c.llama_set_sampler(self.ctx, 0, chain):
            c.llama_sampler_free(chain)
            raise EngineError("llama.cpp cannot run this sampler chain on the device.")
        old, self.chain = self.chain, chain
        if old is not None:
            c.llama_sampler_free(old)

    def token(self, i: int) -> int:
        """The token sampled for output row i of the last decode (-1: the last row)."""
        tok = int(self._get(self.ctx, i))
        if tok < 0:
            raise DecodeError(f"llama.cpp sampled no token for output row {i}.")
        return tok

    def close(self) -> None:
        c = C()
        if self.chain is not None:
            c.llama_set_sampler(self.ctx, 0, None)
            c.llama_sampler_free(self.chain)
            self.chain = None
