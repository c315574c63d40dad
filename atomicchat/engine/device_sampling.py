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
On the CPU backend the in-graph argmax made a 16-row verify slower, so the engine uses this only
when layers run on a GPU (or when asked, for the correctness tests).
"""

from __future__ import annotations

import os

from atomicchat.engine.errors import DecodeError, EngineError
from atomicchat.engine.lib import C
from atomicchat.engine.types import GenParams


def wanted(setting: bool | None, gpu_layers_used: int) -> bool:
    """Whether to sample on the device: the setting, else $ATOMICCHAT_DEVICE_SAMPLING (0/1), else
    only when some layers were offloaded to a GPU."""
    if setting is not None:
        return setting
    env = os.environ.get("ATOMICCHAT_DEVICE_SAMPLING", "").strip()
    if env in ("0", "1"):
        return env == "1"
    return gpu_layers_used > 0


def chain_for(params: GenParams | None, seed: int = 0xFFFFFFFF):
    """A sampler chain with the same stages as the host Sampler's (greedy when params is None or
    greedy). The caller owns it and frees it with llama_sampler_free after detaching it."""
    c = C()
    chain = c.llama_sampler_chain_init(c.llama_sampler_chain_default_params())
    if params is None or params.greedy:
        c.llama_sampler_chain_add(chain, c.llama_sampler_init_greedy())
        return chain
    if params.top_k > 0:
        c.llama_sampler_chain_add(chain, c.llama_sampler_init_top_k(params.top_k))
    if 0.0 < params.top_p < 1.0:
        c.llama_sampler_chain_add(chain, c.llama_sampler_init_top_p(params.top_p, 1))
    if 0.0 < params.min_p < 1.0:
        c.llama_sampler_chain_add(chain, c.llama_sampler_init_min_p(params.min_p, 1))
    c.llama_sampler_chain_add(chain, c.llama_sampler_init_temp(params.temperature))
    c.llama_sampler_chain_add(chain, c.llama_sampler_init_dist(seed & 0xFFFFFFFF))
    return chain


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
