"""The llama.cpp sampler chain for a reply's settings: one builder for the host and device paths,
so both sample from the same stages in the same order."""

from __future__ import annotations

from atomicchat.engine.lib import C
from atomicchat.engine.types import GenParams


def chain_for(params: GenParams | None, seed: int = 0xFFFFFFFF):
    """top-k, top-p, min-p, temperature, then dist with `seed` (greedy when params is None or
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
