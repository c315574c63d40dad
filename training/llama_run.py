"""A minimal llama.cpp DFlash driver (llama-cpp-python 0.3.36, ctypes) for the training scripts.

Used to check export fidelity (llama.cpp logits vs PyTorch) and for quick timing, independently of
the app's engine. Follows /work/shared/docs/dflash-driver.md §1 with the legacy `llama_batch`:
target decode -> llama_get_embeddings_layer_inp(lid) for each draft layer -> concat -> inject into
the draft as an embedding batch at the same positions -> token block [anchor, mask x n] decode with
every row output -> seq_rm the block from the draft KV.
The `llama-ext.h` symbols are C++ and unbound in llama-cpp-python, so they are bound here.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("LLAMA_LOG_LEVEL", "error")
from llama_cpp import llama_cpp as L  # noqa: E402


def _sym(names, argtypes, restype):
    for n in names:
        try:
            f = getattr(L._lib, n)
        except AttributeError:
            continue
        f.argtypes, f.restype = argtypes, restype
        return f
    raise AttributeError(f"none of {names} in libllama")


set_layer_inp = _sym(("llama_set_embeddings_layer_inp", "_Z30llama_set_embeddings_layer_inpP13llama_contextjb",
                      "?llama_set_embeddings_layer_inp@@YAXPEAUllama_context@@I_N@Z"),
                     [L.llama_context_p_ctypes, ctypes.c_uint32, ctypes.c_bool], None)
get_layer_inp = _sym(("llama_get_embeddings_layer_inp", "_Z30llama_get_embeddings_layer_inpP13llama_contextj",
                      "?llama_get_embeddings_layer_inp@@YAPEAMPEAUllama_context@@I@Z"),
                     [L.llama_context_p_ctypes, ctypes.c_uint32], ctypes.POINTER(ctypes.c_float))
layer_ids_p = _sym(("llama_model_target_layer_ids", "_Z28llama_model_target_layer_idsPK11llama_model",
                    "?llama_model_target_layer_ids@@YAPEBHPEBUllama_model@@@Z"),
                   [L.llama_model_p_ctypes], ctypes.POINTER(ctypes.c_int32))
layer_ids_n = _sym(("llama_model_target_layer_ids_n", "_Z30llama_model_target_layer_ids_nPK11llama_model",
                    "?llama_model_target_layer_ids_n@@YAIPEBUllama_model@@@Z"),
                   [L.llama_model_p_ctypes], ctypes.c_uint32)

_quiet_cb = None


def quiet() -> None:
    global _quiet_cb
    _quiet_cb = L.llama_log_callback(lambda level, text, user: None)
    L.llama_log_set(_quiet_cb, ctypes.c_void_p(0))


class Batch:
    def __init__(self, n: int, embd: int = 0) -> None:
        self.cap, self.embd = n, embd
        self.b = L.llama_batch_init(n, embd, 1)

    def fill_tokens(self, toks, pos0: int, out: bool | list[bool]) -> None:
        b = self.b
        assert len(toks) <= self.cap
        for i, t in enumerate(toks):
            b.token[i] = int(t)
            b.pos[i] = pos0 + i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = 0
            b.logits[i] = int(out if isinstance(out, bool) else out[i])
        b.n_tokens = len(toks)

    def fill_embd(self, rows: np.ndarray, pos0: int) -> None:
        b = self.b
        n = rows.shape[0]
        assert n <= self.cap and rows.shape[1] == self.embd
        view = np.ctypeslib.as_array(b.embd, shape=(self.cap, self.embd))
        view[:n] = rows
        for i in range(n):
            b.pos[i] = pos0 + i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = 0
            b.logits[i] = 0
        b.n_tokens = n

    def free(self) -> None:
        L.llama_batch_free(self.b)


class Pair:
    """Target (+ optional DFlash draft) in one process, one sequence."""

    def __init__(self, target: Path, draft: Path | None = None, n_ctx: int = 2048, n_batch: int = 512,
                 n_threads: int = 2) -> None:
        quiet()
        L.llama_backend_init()
        mp = L.llama_model_default_params()
        mp.n_gpu_layers = 0
        mp.use_extra_bufts = False  # as the app's engine: the AMX repack path segfaults on Q4_1 on this CPU
        self.mt = L.llama_model_load_from_file(str(target).encode(), mp)
        assert self.mt, target
        self.vocab = L.llama_model_get_vocab(self.mt)
        self.n_vocab = L.llama_vocab_n_tokens(self.vocab)
        self.n_embd = L.llama_model_n_embd(self.mt)
        cp = L.llama_context_default_params()
        cp.n_ctx, cp.n_batch, cp.n_ubatch = n_ctx, n_batch, n_batch
        cp.n_threads = cp.n_threads_batch = n_threads
        cp.embeddings = False
        self.ct = L.llama_init_from_model(self.mt, cp)
        self.n_batch = n_batch
        self.tb = Batch(n_batch)
        self.md = self.cd = None
        self.lids: list[int] = []
        if draft is not None:
            self.md = L.llama_model_load_from_file(str(draft).encode(), mp)
            assert self.md, draft
            n = layer_ids_n(self.md)
            p = layer_ids_p(self.md)
            self.lids = [p[i] for i in range(n)]
            for lid in self.lids:
                set_layer_inp(self.ct, lid, True)
            dp = L.llama_context_default_params()
            dp.n_ctx, dp.n_batch, dp.n_ubatch = n_ctx, n_batch, n_batch
            dp.n_threads = dp.n_threads_batch = n_threads
            dp.n_rs_seq = 0
            dp.embeddings = False
            dp.ctx_other = self.ct
            self.cd = L.llama_init_from_model(self.md, dp)
            assert self.cd
            L.llama_set_causal_attn(self.cd, False)
            self.mask = L.llama_vocab_mask(L.llama_model_get_vocab(self.md))
            assert self.mask >= 0
            buf = ctypes.create_string_buffer(64)
            L.llama_model_meta_val_str(self.md, b"dflash.block_size", buf, 64)
            self.block_size = int(buf.value or 16)
            self.n_enc = len(self.lids) * self.n_embd
            self.eb = Batch(n_batch, self.n_enc)
            self.db = Batch(n_batch)

    # -- target ------------------------------------------------------------------------------------
    def reset(self) -> None:
        L.llama_memory_clear(L.llama_get_memory(self.ct), True)
        if self.cd:
            L.llama_memory_clear(L.llama_get_memory(self.cd), True)

    def target_decode(self, toks, pos0: int, out: bool = True) -> np.ndarray | None:
        """One target decode call; returns logits [n, V] when out, and keeps the layer inputs."""
        self.tb.fill_tokens(toks, pos0, out if out else [i == len(toks) - 1 for i in range(len(toks))])
        rc = L.llama_decode(self.ct, self.tb.b)
        assert rc == 0, rc
        self._last_n = len(toks)
        if not out:
            return None
        p = L.llama_get_logits(self.ct)
        return np.ctypeslib.as_array(p, shape=(len(toks), self.n_vocab)).copy()

    def last_logits(self) -> np.ndarray:
        p = L.llama_get_logits_ith(self.ct, -1)
        return np.ctypeslib.as_array(p, shape=(self.n_vocab,)).copy()

    def features(self, n: int | None = None) -> np.ndarray:
        """concat_k layer_inp[lid_k] for the rows of the last target decode -> [n, L*E]."""
        n = self._last_n if n is None else n
        parts = [np.ctypeslib.as_array(get_layer_inp(self.ct, lid), shape=(self._last_n, self.n_embd))[:n]
                 for lid in self.lids]
        return np.concatenate(parts, axis=1)

    def layer_inputs(self) -> dict[int, np.ndarray]:
        return {lid: np.ctypeslib.as_array(get_layer_inp(self.ct, lid), shape=(self._last_n, self.n_embd)).copy()
                for lid in self.lids}

    def target_rm(self, p0: int) -> None:
        assert L.llama_memory_seq_rm(L.llama_get_memory(self.ct), 0, p0, -1)

    # -- draft -------------------------------------------------------------------------------------
    def inject(self, feats: np.ndarray, pos0: int) -> None:
        for s in range(0, feats.shape[0], self.n_batch):
            chunk = feats[s:s + self.n_batch]
            self.eb.fill_embd(chunk, pos0 + s)
            rc = L.llama_decode(self.cd, self.eb.b)
            assert rc == 0, rc

    def draft_block(self, anchor: int, pos: int, n_max: int) -> np.ndarray:
        """Block [anchor@pos, mask@pos+1..pos+n_max], all rows output -> logits [n_max+1, V]."""
        toks = [anchor] + [self.mask] * n_max
        self.db.fill_tokens(toks, pos, True)
        rc = L.llama_decode(self.cd, self.db.b)
        assert rc == 0, rc
        p = L.llama_get_logits(self.cd)
        out = np.ctypeslib.as_array(p, shape=(len(toks), self.n_vocab)).copy()
        assert L.llama_memory_seq_rm(L.llama_get_memory(self.cd), 0, pos, -1)
        return out

    # -- generation --------------------------------------------------------------------------------
    def generate(self, prompt: list[int], n_gen: int, n_max: int | None = None, use_draft: bool = True,
                 eos: int | None = None):
        """Greedy; returns (tokens, n_drafted, n_accepted, n_steps)."""
        self.reset()
        P = len(prompt)
        for s in range(0, P, self.n_batch):
            self.target_decode(prompt[s:s + self.n_batch], s, out=False)
            if use_draft and self.cd:
                self.inject(self.features(), s)
        last = int(np.argmax(self.last_logits()))
        out = [last]
        nd = na = steps = 0
        n_max = min(n_max or self.block_size - 1, self.block_size - 1)
        while len(out) < n_gen and last != eos:
            steps += 1
            if not (use_draft and self.cd):
                self.target_decode([last], P, out=True)
                P += 1
                last = int(np.argmax(self.last_logits()))
                out.append(last)
                continue
            d = self.draft_block(last, P, n_max)[1:].argmax(axis=1).tolist()
            lg = self.target_decode([last] + d, P, out=True)
            acc = []
            for j in range(n_max + 1):
                t = int(np.argmax(lg[j]))
                acc.append(t)
                if j == n_max or t != d[j] or t == eos:
                    break
            n_acc = len(acc) - 1
            nd += n_max
            na += n_acc
            self.target_rm(P + n_acc + 1)
            self.inject(self.features(n_acc + 1), P)
            P += n_acc + 1
            out.extend(acc)
            last = acc[-1]
        return out[:n_gen], nd, na, steps

    def close(self) -> None:
        if self.cd:
            self.eb.free()
            self.db.free()
            L.llama_free(self.cd)
        self.tb.free()
        L.llama_free(self.ct)
        if self.md:
            L.llama_model_free(self.md)
        L.llama_model_free(self.mt)
