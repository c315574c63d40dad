"""Token selection for the target: greedy argmax in numpy, or llama.cpp's own sampler chain.

Under DFlash every emitted token is `sample(row j)` of the target given the accepted prefix, so the
output is lossless in distribution for any chain; only the RNG stream differs from plain decoding.
"""

from __future__ import annotations

import random

import numpy as np

from atomicchat.engine.lib import C
from atomicchat.engine.types import GenParams


class Sampler:
    def __init__(self, params: GenParams, n_vocab: int) -> None:
        self.greedy = params.greedy
        self.n_vocab = n_vocab
        self.chain = None
        self.seed = params.seed if params.seed is not None else random.getrandbits(32)
        if not self.greedy:
            c = C()
            chain = c.llama_sampler_chain_init(c.llama_sampler_chain_default_params())
            if params.top_k > 0:
                c.llama_sampler_chain_add(chain, c.llama_sampler_init_top_k(params.top_k))
            if 0.0 < params.top_p < 1.0:
                c.llama_sampler_chain_add(chain, c.llama_sampler_init_top_p(params.top_p, 1))
            if 0.0 < params.min_p < 1.0:
                c.llama_sampler_chain_add(chain, c.llama_sampler_init_min_p(params.min_p, 1))
            c.llama_sampler_chain_add(chain, c.llama_sampler_init_temp(params.temperature))
            c.llama_sampler_chain_add(chain, c.llama_sampler_init_dist(self.seed & 0xFFFFFFFF))
            self.chain = chain

    def sample_row(self, ctx_ptr, idx: int, logits_row: np.ndarray | None) -> int:
        """Sample output row `idx` of the last decode; greedy uses the given logits view."""
        if self.greedy:
            assert logits_row is not None
            return int(np.argmax(logits_row))
        return int(C().llama_sampler_sample(self.chain, ctx_ptr, idx))

    def close(self) -> None:
        if self.chain is not None:
            C().llama_sampler_free(self.chain)
            self.chain = None
