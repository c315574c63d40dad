"""The inference engine: a target model, optionally a DFlash draft, and the two decode loops.

Call sequence and pitfalls follow docs/dflash.md (the verified driver notes for llama-cpp-python
0.3.36 plus this engine's additions). Invariants the loops keep between steps:
- `id_last` (the newest sampled token) sits at position P and is in neither KV cache;
- target KV holds positions 0..P-1 and, while DFlash is in use, so does the draft KV.
All methods must run on one thread: llama contexts are not thread-safe.
"""

from __future__ import annotations

import ctypes
import re
import time
from dataclasses import replace
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from atomicchat.engine import chat
from atomicchat.engine import device_sampling
from atomicchat.engine.detok import Detokenizer
from atomicchat.engine.draft_policy import DraftPolicy, FixedPolicy
from atomicchat.engine.errors import ContextFullError, DecodeError, DraftMismatchError, EngineError
from atomicchat.engine.ext import load_ext
from atomicchat.engine.lib import C, recent_log
from atomicchat.engine.memory_check import check_memory
from atomicchat.engine.model import Context, Model, _addr_fn, _ViewCache, default_threads
from atomicchat.engine.sampling import Sampler
from atomicchat.engine.types import EngineConfig, EngineInfo, Finished, GenParams, GenStats, Step
from atomicchat.engine.validate import DraftInfo, TargetInfo, check_pair, inspect_draft, inspect_target

_OFFLOAD_RE = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
_MIN_CTX = 16


def _snapshot(stats: GenStats) -> GenStats:
    """A copy of the running totals (what dataclasses.replace gives, without its per-field work)."""
    snap = object.__new__(GenStats)
    snap.__dict__.update(stats.__dict__)
    return snap


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    x = np.asarray(a[:n], dtype=np.int64) != np.asarray(b[:n], dtype=np.int64)
    idx = int(np.argmax(x))
    return n if not x[idx] else idx


class Engine:
    """Owns both llama contexts. Construct, then call `generate` from the same thread."""

    def __init__(self, config: EngineConfig, progress: Callable[[str, float], None] | None = None) -> None:
        self.config = config
        self.target: Model | None = None
        self.draft: Model | None = None
        self.tctx: Context | None = None
        self.dctx: Context | None = None
        self._kv_ref: tuple[list[int], int] = ([], 0)  # (seq, n): the target cache holds seq[:n]
        self._dkv_len = 0  # leading positions of _kv that the draft cache also holds
        self._draft_end = 0  # positions 0.._draft_end-1 have rows in the draft cache (some may be blank)
        self._ckpt_buf: ctypes.Array | None = None
        self.layer_ids: list[int] = []  # target layers whose inputs the draft reads
        self._last_decode_pos = 0  # first position of the newest target decode (recurrent rollback bound)
        # Learned per loaded pair: verify/draft costs on this device, the draft's acceptance profile.
        self.policy: DraftPolicy | None = None
        self.policy_for_step: DraftPolicy | FixedPolicy = FixedPolicy(0)
        self.device_sampling = False
        self.tsamp: device_sampling.DeviceSampler | None = None  # on-device chains, target and draft
        self.dsamp: device_sampling.DeviceSampler | None = None
        tinfo = inspect_target(config.target_path)
        dinfo = inspect_draft(config.draft_path) if config.draft_path else None
        if dinfo is not None:
            check_pair(tinfo, dinfo)
            self.ext = load_ext()  # fail before loading gigabytes of weights
        self.tinfo: TargetInfo = tinfo
        self.dinfo: DraftInfo | None = dinfo
        draft_max = max(1, min(config.draft_max or dinfo.block_size - 1, dinfo.block_size - 1)) if dinfo else 0
        check_memory(tinfo, dinfo, max(config.n_ctx, _MIN_CTX), draft_max)  # before llama.cpp allocates
        try:
            self._load(progress)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ loading
    def _load(self, progress: Callable[[str, float], None] | None) -> None:
        c = C()
        cfg = self.config
        step_cb = (lambda stage: (lambda v: (progress(stage, v), True)[1])) if progress else (lambda stage: None)
        self.target = Model(Path(cfg.target_path), cfg.n_gpu_layers, step_cb("target"))
        offload_lines = [ln for ln in recent_log(40) if _OFFLOAD_RE.search(ln)]
        if self.dinfo is not None:
            self.draft = Model(Path(cfg.draft_path), cfg.n_gpu_layers, step_cb("draft"))  # type: ignore[arg-type]
            self.block_size = self.dinfo.block_size
            self.draft_max = max(1, min(cfg.draft_max or self.block_size - 1, self.block_size - 1))
        else:
            self.block_size = 0
            self.draft_max = 0
        self.n_vocab = self.target.n_vocab
        # The context is what was asked for; the batch shrinks to fit it (not the other way round,
        # which turned --ctx 256 into 512). The draft block must still fit into one micro-batch.
        n_ctx = max(cfg.n_ctx, _MIN_CTX)
        if self.draft_max:
            self.draft_max = min(self.draft_max, n_ctx - 1)
        n_batch = min(max(cfg.n_batch, self.draft_max + 1, 1), n_ctx)
        used_early = 0
        if offload_lines:
            m = _OFFLOAD_RE.search(offload_lines[-1])
            used_early = int(m.group(1)) if m else 0
        self.device_sampling = device_sampling.wanted(cfg.device_sampling, used_early)
        threads = cfg.n_threads or default_threads(self.tinfo.file_size)
        batch_threads = cfg.n_threads or max(threads, default_threads(self.tinfo.file_size))

        tp = c.llama_context_default_params()
        tp.n_ctx = n_ctx
        tp.n_batch = n_batch
        tp.n_ubatch = n_batch
        tp.n_threads = threads
        tp.n_threads_batch = batch_threads
        tp.embeddings = False
        tp.no_perf = True
        if self.device_sampling:
            tp.n_outputs_max_per_seq = n_batch  # a verify samples every row of its block
        if self.draft is not None and self.target.is_hybrid:
            tp.n_rs_seq = self.draft_max if cfg.n_rs_seq is None else cfg.n_rs_seq
        self.tctx = Context(self.target, tp, "chat")
        self.n_ctx = self.tctx.n_ctx
        self.n_rs_seq = int(c.llama_n_rs_seq(self.tctx.ptr)) if self.target.is_hybrid else 0

        if self.draft is not None:
            self._init_draft(threads, batch_threads)
            self.policy = DraftPolicy(self.draft_max)
        if self.device_sampling:
            self.tsamp = device_sampling.DeviceSampler(self.tctx.ptr)
            if self.dctx is not None:
                self.dsamp = device_sampling.DeviceSampler(self.dctx.ptr)

        gguf_template = self.tinfo.chat_template or self.target.chat_template()
        self.template = chat.pick_template(gguf_template, self.tinfo.arch)
        self.fallback_template = chat.fallback_template(self.tinfo.arch)
        used = 0
        if offload_lines:
            m = _OFFLOAD_RE.search(offload_lines[-1])
            used = int(m.group(1)) if m else 0
        notes: list[str] = []
        if not c.llama_supports_gpu_offload():
            device = "CPU"
            if cfg.n_gpu_layers != 0:
                notes.append("This build of llama.cpp has no GPU backend, so everything runs on the CPU.")
        elif cfg.n_gpu_layers == 0:
            device = "CPU (GPU layers set to 0)"
        else:
            device = f"GPU ({used}/{self.target.n_layer + 1} layers)" if used else "CPU (no GPU layers were offloaded)"
        if self.tinfo.context_length and n_ctx > self.tinfo.context_length:
            notes.append(f"Context {n_ctx} exceeds the model's trained {self.tinfo.context_length} tokens.")
        if not gguf_template:
            notes.append(
                "The model file has no chat template, so it looks like a base model (it continues text rather "
                f"than answering); the built-in {'Gemma' if self.template == chat.GEMMA else 'ChatML'} format is used."
            )
        self.info = EngineInfo(
            target_name=self.tinfo.name,
            target_path=self.tinfo.path,
            draft_name=self.dinfo.name if self.dinfo else None,
            draft_path=self.dinfo.path if self.dinfo else None,
            block_size=self.block_size,
            draft_max=self.draft_max,
            n_ctx=self.n_ctx,
            device=device,
            gpu_layers_used=used,
            has_chat_template=bool(gguf_template),
            looks_like_base_model=not gguf_template,
            is_hybrid=self.target.is_hybrid,
            n_vocab=self.n_vocab,
            notes=tuple(notes),
        )
        if gguf_template:  # a template that cannot render a plain chat is replaced now, not mid-reply
            probe = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
            try:
                self._with_template(chat.render, probe, None)
            except chat.TemplateError:
                pass  # the template refused this probe; real conversations are judged when they come

    def _init_draft(self, threads: int, batch_threads: int) -> None:
        c = C()
        assert self.draft is not None and self.tctx is not None and self.target is not None
        if self.draft.n_vocab != self.target.n_vocab:
            raise DraftMismatchError("The draft and target vocabularies differ in size.")
        n = int(self.ext.model_target_layer_ids_n(self.draft.ptr))
        ids = self.ext.model_target_layer_ids(self.draft.ptr)
        self.layer_ids = [int(ids[i]) for i in range(n)]
        for lid in self.layer_ids:  # before the first target decode, or acceptance drops to zero
            self.ext.set_embeddings_layer_inp(self.tctx.ptr, lid, True)
        dp = c.llama_context_default_params()
        dp.n_ctx = self.tctx.n_ctx
        dp.n_batch = self.tctx.n_batch
        dp.n_ubatch = self.tctx.n_ubatch
        dp.n_threads = threads
        dp.n_threads_batch = batch_threads
        dp.n_rs_seq = 0
        dp.embeddings = False
        dp.no_perf = True
        if self.device_sampling:
            dp.n_outputs_max_per_seq = self.tctx.n_batch
        dp.ctx_other = self.tctx.ptr
        self.dctx = Context(self.draft, dp, "draft")
        causal = (self.draft.meta("dflash.attention.causal") or "false").lower() == "true"
        c.llama_set_causal_attn(self.dctx.ptr, causal)
        self.mask_token = int(c.llama_vocab_mask(self.draft.vocab))
        if self.mask_token < 0:
            raise DraftMismatchError(f"{self.draft.path.name} has no mask token; DFlash cannot draft with it.")
        rope = int(c.llama_model_rope_type(self.draft.ptr))
        self.n_pos_embd = 4 if rope in (c.LLAMA_ROPE_TYPE_MROPE, c.LLAMA_ROPE_TYPE_IMROPE) else 1
        self.n_embd = self.target.n_embd
        self._get_layer_inp = _addr_fn(self.ext.get_embeddings_layer_inp)
        self._layer_caches = [(lid, _ViewCache(self.n_embd)) for lid in self.layer_ids]
        self._mask_block = [self.mask_token] * (self.draft_max + 1)  # [id_last, mask x n_max], reused
        if self.dctx.n_ubatch < self.draft_max + 1:
            raise EngineError("internal: draft micro-batch is smaller than the draft block")

    # ------------------------------------------------------------------ prompts
    def tokenize(self, text: str, add_special: bool = True) -> list[int]:
        assert self.target is not None
        return self.target.tokenize(text, add_special)

    def detokenize(self, tokens: list[int]) -> str:
        assert self.target is not None
        d = Detokenizer(self.target.piece)
        return d.feed(tokens) + d.flush()

    def _template_kwargs(self, enable_thinking: bool | None) -> dict:
        assert self.target is not None
        if enable_thinking is None and self.draft is not None:
            enable_thinking = False  # DFlash drafts are trained on non-thinking output
        bos = self.target.bos()
        eos = self.target.eos()
        return {
            "bos_token": self.target.token_text(bos) if bos >= 0 else "",
            "eos_token": self.target.token_text(eos) if eos >= 0 else "",
            "enable_thinking": enable_thinking,
        }

    def _with_template(self, fn: Callable, messages: list[dict[str, str]], enable_thinking: bool | None):
        """Render with the model's template; if it fails (not a deliberate refusal), switch to the
        built-in fallback for good and say so once in `info.notes`."""
        kwargs = self._template_kwargs(enable_thinking)
        try:
            return fn(self.template, messages, **kwargs)
        except chat.TemplateRefusal:
            raise
        except chat.TemplateError as exc:
            if self.template == self.fallback_template:
                raise
            self._use_fallback(str(exc))
            return fn(self.template, messages, **kwargs)

    def _use_fallback(self, reason: str) -> None:
        self.template = self.fallback_template
        name = "Gemma" if self.template == chat.GEMMA else "ChatML"
        note = f"{reason} Using the built-in {name} chat format instead."
        self.info = replace(self.info, notes=(*self.info.notes, note))

    def render_chat(self, messages: list[dict[str, str]], enable_thinking: bool | None = None) -> str:
        return self._with_template(chat.render, messages, enable_thinking)

    def chat_prompt(self, messages: list[dict[str, str]], enable_thinking: bool | None = None) -> list[int]:
        """Prompt tokens: the template's markup with special-token parsing, message contents without,
        so text a user types ("<|im_start|>", "<start_of_turn>model") stays text."""
        assert self.target is not None
        parts: list[tuple[str, bool]] = self._with_template(chat.render_parts, messages, enable_thinking)
        bos = self.target.bos()
        bos_text = self.target.token_text(bos) if bos >= 0 else ""
        add_special = not (bos_text and "".join(t for t, _ in parts).startswith(bos_text))
        tokens: list[int] = []
        for text, markup in parts:
            if text:
                tokens += self.target.tokenize(text, add_special=add_special and not tokens, parse_special=markup)
        if not tokens and add_special:
            tokens = self.target.tokenize("", add_special=True, parse_special=True)
        return tokens

    # ------------------------------------------------------------------ low-level steps
    def _check(self, rc: int, what: str) -> None:
        if rc != 0:
            hint = " (the context is full)" if rc == 1 else ""
            raise DecodeError(f"llama.cpp failed while {what} (code {rc}){hint}.")

    def _layer_views(self, n_rows: int) -> list[np.ndarray]:
        """Target layer inputs of the last target decode, one (n_rows, E) view per draft layer id.
        Views are cached per layer and reused while llama.cpp keeps the buffer where it was."""
        assert self.tctx is not None
        get, ptr, n = self._get_layer_inp, self.tctx.ptr, n_rows
        return [cache.get(get(ptr, lid), n) for lid, cache in self._layer_caches]

    def _inject(self, n_rows: int, pos0: int) -> None:
        """Feed the draft the target features of the last target decode's first n_rows tokens,
        placed at positions pos0..: each layer's rows are copied straight into the draft's
        embedding batch (one copy per layer, no per-row calls)."""
        assert self.dctx is not None and self.tctx is not None
        d, E = self.dctx, self.n_embd
        if pos0 > self._draft_end:
            self._fill_draft_gap(pos0)
        rows = d.embd_rows(E * len(self._layer_caches))
        self._draft_end = pos0 + n_rows
        if n_rows == 1:  # the usual step (nothing accepted): one memmove per layer, no views
            get, ptr, move, nb = self._get_layer_inp, self.tctx.ptr, ctypes.memmove, 4 * E
            dst = d.embd_batch.embd_addr  # type: ignore[union-attr]
            for k, (lid, _cache) in enumerate(self._layer_caches):
                src = get(ptr, lid)
                if not src:
                    raise DecodeError("llama.cpp returned no target features for the draft.")
                move(dst + k * nb, src, nb)
            self._check(d.decode_embd(1, pos0, self.n_pos_embd), "feeding the draft")
            return
        views = self._layer_views(n_rows)
        ub = d.n_ubatch  # non-causal draft: more rows than n_ubatch aborts the process
        for s in range(0, n_rows, ub):
            m = min(ub, n_rows - s)
            for k, v in enumerate(views):
                rows[:m, k * E : (k + 1) * E] = v[s : s + m]
            self._check(d.decode_embd(m, pos0 + s, self.n_pos_embd), "feeding the draft")

    def _fill_draft_gap(self, pos0: int) -> None:
        """Blank rows for the positions plain steps did not feed the draft, up to pos0: llama.cpp
        needs each sequence's positions to stay consecutive. A blank row has zero keys and values, so
        it only dilutes the draft's attention a little; the target still decides every token."""
        assert self.dctx is not None
        d = self.dctx
        rows = d.embd_rows(self.n_embd * len(self._layer_caches))
        for s in range(self._draft_end, pos0, d.n_ubatch):
            m = min(d.n_ubatch, pos0 - s)
            rows[:m] = 0.0
            self._check(d.decode_embd(m, s, self.n_pos_embd), "feeding the draft")
        self._draft_end = pos0

    def _decode_target(self, tokens: list[int], pos0: int, outputs: str) -> None:
        assert self.tctx is not None
        self._last_decode_pos = pos0
        self._check(self.tctx.decode_tokens(tokens, pos0, outputs), "evaluating the model")

    def _prefill(self, tokens: list[int], start: int, inject: bool) -> None:
        assert self.tctx is not None
        nb = self.tctx.n_batch
        for s in range(start, len(tokens), nb):
            chunk = tokens[s : s + nb]
            self._decode_target(chunk, s, "last" if s + len(chunk) == len(tokens) else "none")
            if inject:
                self._inject(len(chunk), s)

    def _prepare_cache(self, prompt: list[int], use_draft: bool) -> int:
        """Keep the longest reusable prefix of both caches; return how many prompt tokens are cached."""
        assert self.tctx is not None
        kv = self._kv
        common = min(_common_prefix(kv, prompt), len(prompt) - 1)
        if use_draft:
            common = min(common, self._dkv_len)
        if common < len(kv) and not self._can_trim(common):
            self._reset_cache()  # recurrent state cannot roll back that far
            return 0
        self._kv = kv[:common]
        if self.dctx is not None and self._dkv_len > common:
            if self.dctx.seq_rm(common):
                self._dkv_len = common
                self._draft_end = min(self._draft_end, common)
            else:
                self.dctx.clear_memory()
                self._dkv_len = self._draft_end = 0
                if use_draft:
                    self._reset_cache()
                    return 0
        return common

    def _can_trim(self, p0: int) -> bool:
        """Drop target positions p0.. . A recurrent (hybrid) target keeps per-token snapshots of the
        last decode only: llama.cpp's seq_rm says yes to any rollback up to n_rs_seq tokens, but one
        that reaches back past the last decode restores a state from the wrong step (seen: a reply
        regenerated after four single-token steps came out different). So refuse those here."""
        assert self.tctx is not None and self.target is not None
        if self.target.is_hybrid and p0 <= self._last_decode_pos:
            return False
        return self.tctx.seq_rm(p0)

    def _reset_cache(self) -> None:
        if self.tctx is not None:
            self.tctx.clear_memory()
        if self.dctx is not None:
            self.dctx.clear_memory()
        self._kv = []
        self._dkv_len = self._draft_end = 0

    def _save_checkpoint(self) -> int:
        c = C()
        flags = c.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
        assert self.tctx is not None
        size = int(c.llama_state_seq_get_size_ext(self.tctx.ptr, 0, flags))
        if self._ckpt_buf is None or len(self._ckpt_buf) < size:
            self._ckpt_buf = (ctypes.c_uint8 * size)()
        n = int(c.llama_state_seq_get_data_ext(self.tctx.ptr, self._ckpt_buf, size, 0, flags))
        if n == 0:
            raise DecodeError("Could not save the recurrent state before verifying a draft.")
        return n

    def _restore_checkpoint(self, n: int) -> None:
        c = C()
        assert self.tctx is not None and self._ckpt_buf is not None
        flags = c.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
        if int(c.llama_state_seq_set_data_ext(self.tctx.ptr, self._ckpt_buf, n, 0, flags)) == 0:
            raise DecodeError("Could not restore the recurrent state after a rejected draft.")

    def _plain_step(self, id_last: int, pos: int, sampler: Sampler, inject: bool) -> list[int]:
        assert self.tctx is not None
        self._decode_target([id_last], pos, "all")
        if self.tsamp is not None:
            tok = self.tsamp.token(0)
        elif sampler.greedy:  # what sampler.sample_row does for greedy, minus a call layer
            tok = int(self.tctx.logits(1, self.n_vocab)[0].argmax())
        else:
            tok = sampler.sample_row(self.tctx.ptr, 0, None)
        if inject:
            self._inject(1, pos)
        return [tok]

    def _draft_block(self, id_last: int, pos: int, n_max: int, n_use: int) -> list[int]:
        """Draft in one forward pass of the draft over [id_last, mask x n_max]; keep the first n_use.

        The full block is always decoded (fixed shapes, the trained layout), then truncated."""
        assert self.dctx is not None
        d = self.dctx
        if self._draft_end < pos:
            self._fill_draft_gap(pos)
        block = self._mask_block[: n_max + 1]
        block[0] = id_last
        if self.dsamp is not None:  # sampled in the graph; rows past n_use are not outputs
            # a prefix of rows: the dflash graph outputs its first n_outputs rows whatever the mask
            self._check(d.decode_tokens(block, pos, range(0, n_use + 1)), "drafting")
            drafts = [self.dsamp.token(j) for j in range(1, n_use + 1)]
        else:
            self._check(d.decode_tokens(block, pos, "all"), "drafting")  # every row output, or logits shift
            drafts = d.logits(n_use + 1, self.n_vocab)[1:].argmax(axis=1).tolist()
        if not d.seq_rm(pos):  # the noise block wrote K/V that must not stay
            raise DecodeError("Could not clear the draft block from the draft cache.")
        self._draft_end = pos
        return drafts

    def _dflash_step(
        self, id_last: int, pos: int, n_max: int, n_use: int, sampler: Sampler, stats: GenStats
    ) -> tuple[list[int], int]:
        """One draft + verify + rollback step. Returns (accepted prefix + target token, n drafted)."""
        assert self.tctx is not None and self.target is not None
        t0 = time.perf_counter()
        drafts = self._draft_block(id_last, pos, n_max, n_use)
        n = len(drafts)
        t1 = time.perf_counter()
        ckpt = self._save_checkpoint() if self.target.is_hybrid and n > self.n_rs_seq else 0

        tctx = self.tctx
        self._decode_target([id_last, *drafts], pos, "all")
        is_eog = self.target.is_eog
        acc: list[int] = []
        if self.tsamp is not None:
            token = self.tsamp.token
            for j in range(n + 1):
                tok = token(j)
                acc.append(tok)
                if j == n or tok != drafts[j] or is_eog(tok):
                    break
        elif sampler.greedy:
            logits = tctx.logits(n + 1, self.n_vocab)
            for j in range(n + 1):
                tok = int(logits[j].argmax())
                acc.append(tok)
                if j == n or tok != drafts[j] or is_eog(tok):
                    break
        else:
            for j in range(n + 1):
                tok = sampler.sample_row(tctx.ptr, j, None)
                acc.append(tok)
                if j == n or tok != drafts[j] or is_eog(tok):
                    break
        n_acc = len(acc) - 1
        if n_acc < n and not tctx.seq_rm(pos + n_acc + 1):
            if not ckpt:
                raise DecodeError("The model could not roll back a rejected draft.")
            self._restore_checkpoint(ckpt)
            if not tctx.seq_rm(pos):
                raise DecodeError("The model could not drop a rejected draft after restoring its state.")
            self._decode_target([id_last, *acc[:-1]], pos, "none")
            stats.n_fallbacks += 1
        t2 = time.perf_counter()
        self._inject(n_acc + 1, pos)  # features of the accepted rows, from the last target decode
        t3 = time.perf_counter()
        draft_s = (t1 - t0) + (t3 - t2)
        stats.draft_seconds += draft_s
        stats.verify_seconds += t2 - t1
        self.policy_for_step.record(n, n_acc, draft_s, t2 - t1)
        return acc, n

    # ------------------------------------------------------------------ generation
    def generate(
        self,
        prompt: list[int],
        params: GenParams = GenParams(),
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[Step | Finished]:
        """Yield a Step per decode step, then one Finished. Safe to abandon between steps."""
        assert self.tctx is not None and self.target is not None
        if not prompt:
            raise EngineError("The prompt is empty.")
        if len(prompt) >= self.n_ctx:
            how = "as long as" if len(prompt) == self.n_ctx else "longer than"
            raise ContextFullError(
                f"The conversation is {len(prompt)} tokens long, {how} the context of {self.n_ctx} tokens, "
                "which leaves no room for a reply. Start a new chat or raise the context size."
            )
        bad = [t for t in prompt if not 0 <= t < self.n_vocab]
        if bad:
            raise EngineError(f"Token id {bad[0]} is outside the model's vocabulary of {self.n_vocab}.")
        use_draft = bool(params.use_draft and self.dctx is not None)
        n_max = min(params.draft_max or self.draft_max, self.draft_max) if use_draft else 0
        pinned = bool(params.draft_max or self.config.draft_max) or self.policy is None
        policy = FixedPolicy(n_max) if pinned or not use_draft else self.policy
        self.policy_for_step = policy
        stats = GenStats(n_prompt=len(prompt))
        sampler = Sampler(params, self.n_vocab)
        if self.tsamp is not None and not params.greedy:
            self.tsamp.use(params, sampler.seed)  # the same chain and seed, run in the graph
        detok = Detokenizer(self.target.piece)
        seq = list(prompt)  # prompt + every sampled token
        out: list[int] = []
        stop = should_stop or (lambda: False)
        try:
            t0 = time.perf_counter()
            cached = self._prepare_cache(prompt, use_draft)
            stats.n_prompt_cached = cached
            self._prefill(prompt, cached, inject=use_draft)
            if self.tsamp is not None:
                first = self.tsamp.token(-1)
            else:
                row = self.tctx.logits_last(self.n_vocab) if sampler.greedy else None
                first = sampler.sample_row(self.tctx.ptr, -1, row)
            pos = len(prompt)
            self._commit(seq, pos, use_draft)
            stats.prefill_seconds = time.perf_counter() - t0
            t_gen = time.perf_counter()
            acc, n_drafted = [first], 0
            while True:
                stats.n_steps += 1
                if n_drafted:
                    stats.n_draft_steps += 1
                    stats.n_drafted += n_drafted
                    stats.n_accepted += len(acc) - 1
                seq.extend(acc)
                reason = None
                emit = acc
                if self.target.is_eog(acc[-1]):
                    emit, reason = acc[:-1], "eos"
                out.extend(emit)
                stats.n_generated = len(out)
                stats.generate_seconds = time.perf_counter() - t_gen
                if reason is None and len(out) >= params.max_tokens:
                    reason = "length"
                if reason is None and pos + 1 >= self.n_ctx:  # prompt + output fill the context
                    reason = "context"
                self._commit(seq, pos, use_draft)
                n_ok = min(len(acc) - 1, len(emit))  # accepted draft tokens come first
                drafted_text = detok.feed(emit[:n_ok]) if n_ok else ""
                yield Step(
                    tokens=list(emit),
                    text=drafted_text + detok.feed(emit[n_ok:]),
                    from_draft=[True] * n_ok + [False] * (len(emit) - n_ok),
                    n_drafted=n_drafted,
                    n_accepted=len(acc) - 1 if n_drafted else 0,
                    stats=_snapshot(stats),
                    draft_chars=len(drafted_text),
                )
                if reason is None and stop():
                    reason = "cancelled"
                if reason is not None:
                    break
                id_last = seq[-1]
                remaining = params.max_tokens - len(out)
                limit = min(n_max, remaining - 1, self.n_ctx - pos - 2) if use_draft else 0
                n_use = policy.choose(limit) if limit >= 1 else 0
                block = n_max if pinned else n_use  # a pinned length keeps its trained block
                if n_use >= 1 and pos + block < self.n_ctx:
                    acc, n_drafted = self._dflash_step(id_last, pos, block, n_use, sampler, stats)
                else:
                    t1 = time.perf_counter()
                    feed = use_draft and policy.needs_features()  # long plain runs skip feeding the draft
                    acc, n_drafted = self._plain_step(id_last, pos, sampler, inject=feed), 0
                    dt = time.perf_counter() - t1
                    stats.verify_seconds += dt
                    if use_draft:
                        policy.record(0, 0, 0.0, dt, fed=feed)
                pos += len(acc)
            tail = detok.flush()
            if tail:
                yield Step(tokens=[], text=tail, from_draft=[], n_drafted=0, n_accepted=0, stats=stats)
            yield Finished(reason=reason, stats=replace(stats), tokens=out, text=self.detokenize(out))
        except EngineError:
            self._reset_cache()
            raise
        finally:
            sampler.close()
            if self.tsamp is not None and not params.greedy:
                self.tsamp.use(None)

    def _commit(self, seq: list[int], pos: int, use_draft: bool) -> None:
        """Record what the caches hold: every token before position `pos`. `seq` only ever grows
        at its end, so keeping (seq, pos) is enough; the copy is made when `_kv` is read."""
        self._kv_ref = (seq, pos)
        if use_draft:
            self._dkv_len = pos

    @property
    def _kv(self) -> list[int]:
        """Tokens whose KV is in the target cache, positions 0..len-1."""
        seq, n = self._kv_ref
        return seq[:n]

    @_kv.setter
    def _kv(self, tokens: list[int]) -> None:
        self._kv_ref = (tokens, len(tokens))

    def reset(self) -> None:
        """Forget the cached conversation (both KV caches)."""
        self._reset_cache()

    # ------------------------------------------------------------------ teardown
    def close(self) -> None:
        """Free in the order llama.cpp needs: draft context, target context, then the models."""
        for attr in ("dsamp", "tsamp", "dctx", "tctx", "draft", "target"):
            obj = getattr(self, attr, None)
            if obj is not None:
                obj.close()
                setattr(self, attr, None)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
