"""The DFlash draft side of an engine: its context, the llama-ext bindings, and its cache bookkeeping.

An Engine holds one of these only when a draft is loaded (else None), so nothing draft-specific
exists half-initialised on a target-only engine. The draft reads the inputs of a few target layers
(`layer_ids`) for every position the target has decoded ("features", fed by `inject`), and drafts a
block [id_last, mask x n] in one non-causal pass (`draft_block`). Its cache must hold consecutive
positions: `end` is the first position without a row, `kv_len` how many leading conversation
positions hold real features (blank rows fill gaps that plain steps left unfed; the rows of plain
steps that fed the draft wait on the host, `stage`, and are decoded in one batch when it next needs
them).
"""

from __future__ import annotations

import ctypes
import time
from typing import Any

import numpy as np

from atomicchat.engine import attention, device_sampling
from atomicchat.engine.draft_confidence import confident_prefix
from atomicchat.engine.errors import DecodeError, DraftMismatchError, EngineError, check_decode
from atomicchat.engine.lib import C
from atomicchat.engine.model import Context, Model, ViewCache, addr_fn


# Plain steps' features kept on the host for the draft (`DraftSide.stage`): a probe's warm-up
# (`DraftPolicy.warm`, 16) and then some.
STAGE_ROWS = 64


class DraftSide:
    """The draft model's context and what drafting needs around it. Owns `ctx` (and its sampler)."""

    def __init__(
        self,
        model: Model,
        tctx: Context,
        ext: Any,
        draft_max: int,
        threads: int,
        batch_threads: int,
        on_device: bool,
        flash_attn: int = attention.AUTO,
    ) -> None:
        c = C()
        if model.n_vocab != tctx.model.n_vocab:
            raise DraftMismatchError("The draft and target vocabularies differ in size.")
        self.model = model
        self.ext = ext
        self.draft_max = draft_max
        n = int(ext.model_target_layer_ids_n(model.ptr))
        ids = ext.model_target_layer_ids(model.ptr)
        self.layer_ids = [int(ids[i]) for i in range(n)]
        for lid in self.layer_ids:  # before the first target decode, or acceptance drops to zero
            ext.set_embeddings_layer_inp(tctx.ptr, lid, True)
        dp = c.llama_context_default_params()
        dp.n_ctx = tctx.n_ctx
        dp.n_batch = tctx.n_batch
        dp.n_ubatch = tctx.n_ubatch
        dp.n_threads = threads
        dp.n_threads_batch = batch_threads
        dp.n_rs_seq = 0
        dp.embeddings = False
        dp.no_perf = True
        dp.flash_attn_type = flash_attn  # as the target's (engine/attention.py)
        if on_device:
            dp.n_outputs_max_per_seq = tctx.n_batch
        dp.ctx_other = tctx.ptr
        self.ctx = Context(model, dp, "draft")
        self.samp: device_sampling.DeviceSampler | None = None
        try:
            self._setup(model, tctx, draft_max, on_device)
        except BaseException:
            self.close()
            raise
        self.kv_len = 0  # leading conversation positions whose real features the cache holds
        self.end = 0  # positions 0..end-1 have rows in the cache (some may be blank)
        # Features of plain steps kept on the host (`stage`), position p in row p % STAGE_ROWS
        # (`_staged` says which position a row holds, -1: none), fed to the draft in one batch when
        # it next needs them.
        self._stage = np.zeros((STAGE_ROWS, self.n_embd * len(self.layer_ids)), dtype=np.float32)
        self._stage_addr = self._stage.ctypes.data
        self._staged = [-1] * STAGE_ROWS
        # What feeding one row cost in the last decode of several (`inject`, `fill_gap`): a staged
        # row's share of the decode that will feed it, which the policy prices a fed plain step by.
        self.row_seconds = 0.0

    def _setup(self, model: Model, tctx: Context, draft_max: int, on_device: bool) -> None:
        c = C()
        causal = (model.meta("dflash.attention.causal") or "false").lower() == "true"
        c.llama_set_causal_attn(self.ctx.ptr, causal)
        self.mask_token = int(c.llama_vocab_mask(model.vocab))
        if self.mask_token < 0:
            raise DraftMismatchError(f"{model.path.name} has no mask token; DFlash cannot draft with it.")
        rope = int(c.llama_model_rope_type(model.ptr))
        self.n_pos_embd = 4 if rope in (c.LLAMA_ROPE_TYPE_MROPE, c.LLAMA_ROPE_TYPE_IMROPE) else 1
        self.n_embd = tctx.model.n_embd
        self.n_vocab = model.n_vocab
        self._get_layer_inp = addr_fn(self.ext.get_embeddings_layer_inp)
        self._layer_caches = [(lid, ViewCache(self.n_embd)) for lid in self.layer_ids]
        self._mask_block = [self.mask_token] * (draft_max + 1)  # [id_last, mask x n_max], reused
        if self.ctx.n_ubatch < draft_max + 1:
            raise EngineError("internal: draft micro-batch is smaller than the draft block")
        if on_device:
            self.samp = device_sampling.DeviceSampler(self.ctx.ptr)

    # ------------------------------------------------------------------ features
    def _layer_views(self, tctx: Context, n_rows: int) -> list[np.ndarray]:
        """Target layer inputs of the last target decode, one (n_rows, E) view per draft layer id.
        Views are cached per layer and reused while llama.cpp keeps the buffer where it was."""
        get, ptr = self._get_layer_inp, tctx.ptr
        return [cache.get(get(ptr, lid), n_rows) for lid, cache in self._layer_caches]

    def inject(self, tctx: Context, n_rows: int, pos0: int) -> None:
        """Feed the draft the target features of the last target decode's first n_rows tokens,
        placed at positions pos0..: each layer's rows are copied straight into the draft's
        embedding batch (one copy per layer, no per-row calls)."""
        d, E = self.ctx, self.n_embd
        if pos0 > self.end:
            self.fill_gap(pos0)
        rows = d.embd_rows(E * len(self._layer_caches))
        self.end = pos0 + n_rows
        if n_rows == 1:  # the usual step (nothing accepted): one memmove per layer, no views
            self._copy_row(tctx, d.embd_batch.embd_addr)  # type: ignore[union-attr]
            check_decode(d.decode_embd(1, pos0, self.n_pos_embd), "feeding the draft")
            return
        t0 = time.perf_counter()
        views = self._layer_views(tctx, n_rows)
        ub = d.n_ubatch  # non-causal draft: more rows than n_ubatch aborts the process
        for s in range(0, n_rows, ub):
            m = min(ub, n_rows - s)
            for k, v in enumerate(views):
                rows[:m, k * E : (k + 1) * E] = v[s : s + m]
            check_decode(d.decode_embd(m, pos0 + s, self.n_pos_embd), "feeding the draft")
        self.row_seconds = (time.perf_counter() - t0) / n_rows

    def stage(self, tctx: Context, pos: int) -> None:
        """Keep the last target decode's one row of features, position pos, on the host: the draft
        is fed it with the other staged rows in one batch when it next needs them (`fill_gap`), not
        in a decode of its own now. A plain step that fed the draft at once paid a one-row draft
        decode, 0.15-0.25 ms on demo F32's 1.7-1.9 ms step (2-core Xeon), where 16 rows fed in one
        decode cost 0.84 ms (0.05 a row) and a copy of one row a few microseconds."""
        i = pos % STAGE_ROWS
        self._staged[i] = pos
        self._copy_row(tctx, self._stage_addr + i * self._stage.strides[0])

    def _copy_row(self, tctx: Context, dst: int) -> None:
        """Copy the last target decode's first row of features, layer after layer, to address dst."""
        get, ptr, move, nb = self._get_layer_inp, tctx.ptr, ctypes.memmove, 4 * self.n_embd
        for k, (lid, _cache) in enumerate(self._layer_caches):
            src = get(ptr, lid)
            if not src:
                raise DecodeError("llama.cpp returned no target features for the draft.")
            move(dst + k * nb, src, nb)

    def ready(self) -> int:
        """The first position from `end` on whose features are neither in the cache nor staged: a
        reply's last plain steps leave theirs staged, fed with the next reply's prompt."""
        p = self.end
        while self._staged[p % STAGE_ROWS] == p:
            p += 1
        return p

    def fill_gap(self, pos0: int) -> None:
        """Rows for the positions from `end` up to pos0 that no decode fed the draft: the staged
        ones (`stage`) with their features, the others blank (llama.cpp needs each sequence's
        positions to stay consecutive). A blank row has zero keys and values, so it only dilutes
        the draft's attention a little; the target still decides every token."""
        d, n, t0 = self.ctx, pos0 - self.end, time.perf_counter()
        rows = d.embd_rows(self.n_embd * len(self._layer_caches))
        staged, stage = self._staged, self._stage
        for s in range(self.end, pos0, d.n_ubatch):
            m = min(d.n_ubatch, pos0 - s)
            rows[:m] = 0.0
            for p in range(max(s, pos0 - STAGE_ROWS), s + m):
                if staged[p % STAGE_ROWS] == p:
                    rows[p - s] = stage[p % STAGE_ROWS]
            check_decode(d.decode_embd(m, s, self.n_pos_embd), "feeding the draft")
        if n > 1:
            self.row_seconds = (time.perf_counter() - t0) / n
        self.end = pos0

    # ------------------------------------------------------------------ drafting
    def draft_block(self, id_last: int, pos: int, n_max: int, n_use: int, p_min: float = 0.0) -> list[int]:
        """Draft in one forward pass of the draft over [id_last, mask x n_max]; keep the first n_use,
        and of those only the prefix before the first token whose probability is below p_min
        (engine/draft_confidence.py; the host path only: an on-device draft sampler returns tokens alone).

        The full block is always decoded (fixed shapes, the trained layout), then truncated."""
        d = self.ctx
        if self.end < pos:
            self.fill_gap(pos)
        block = self._mask_block[: n_max + 1]
        block[0] = id_last
        if self.samp is not None:  # sampled in the graph; rows past n_use are not outputs
            # a prefix of rows: the dflash graph outputs its first n_outputs rows whatever the mask
            check_decode(d.decode_tokens(block, pos, range(0, n_use + 1)), "drafting")
            drafts = [self.samp.token(j) for j in range(1, n_use + 1)]
        else:
            check_decode(d.decode_tokens(block, pos, "all"), "drafting")  # every row output, or logits shift
            rows = d.logits(n_use + 1, self.n_vocab)[1:]
            drafts = rows.argmax(axis=1).tolist()
            if p_min > 0.0:
                del drafts[confident_prefix(rows, p_min):]
        if not d.seq_rm(pos):  # the noise block wrote K/V that must not stay
            raise DecodeError("Could not clear the draft block from the draft cache.")
        self.end = pos
        return drafts

    # ------------------------------------------------------------------ cache
    def trim(self, n: int) -> bool:
        """Keep positions 0..n-1 only. False (and an empty cache) when llama.cpp refused."""
        if self.ctx.seq_rm(n):
            self.kv_len = min(self.kv_len, n)
            self.end = min(self.end, n)
            self._staged = [p if p < n else -1 for p in self._staged]  # rows before n still hold them
            return True
        self.clear()
        return False

    def clear(self) -> None:
        self.ctx.clear_memory()
        self.kv_len = self.end = 0
        self._staged = [-1] * STAGE_ROWS

    def close(self) -> None:
        """The sampler first (it is attached to the context), then the context; the model is the
        engine's to free, after the target context."""
        if self.samp is not None:
            self.samp.close()
            self.samp = None
        self.ctx.close()
