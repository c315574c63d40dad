"""Token selection for the target: greedy argmax in numpy, or llama.cpp's own sampler chain.

Under DFlash every emitted token is `sample(row j)` of the target given the accepted prefix, so the
output is lossless in distribution for any chain; only the RNG stream differs from plain decoding.
"""

from __future__ import annotations

import random

import numpy as np

from atomicchat.engine.lib import C
from atomicchat.engine.sampler_chain import chain_for
from atomicchat.engine.types import GenParams


class Sampler:
    def __init__(self, params: GenParams, n_vocab: int) -> None:
        self.greedy = params.greedy
        self.n_vocab = n_vocab
        self.chain = None
        self.seed = params.seed if params.seed is not None else random.getrandbits(32)
        if not self.greedy:  # the same chain the device path attaches to a context
            self.chain = chain_for(params, self.seed)

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
