"""The inference engine: a target model, optionally a DFlash draft, and the two decode loops.

Call sequence and pitfalls follow docs/dflash.md (the verified driver notes for llama-cpp-python
0.3.36 plus this engine's additions). Invariants the loops keep between steps:
- `id_last` (the newest sampled token) sits at position P and is in neither KV cache;
- target KV holds positions 0..P-1 and, while DFlash is in use, so does the draft KV.
All methods must run on one thread: llama contexts are not thread-safe.
"""

from __future__ import annotations

import ctypes
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from atomicchat.engine import chat
from atomicchat.engine import attention, device_info, device_sampling
from atomicchat.engine.detok import Detokenizer
from atomicchat.engine.draft_confidence import DEFAULT_P_MIN, check_p_min
from atomicchat.engine.draft_policy import SETTLE_WINDOW, DraftPolicy, FixedPolicy, settled
from atomicchat.engine.draft_side import DraftSide
from atomicchat.engine.errors import ContextFullError, DecodeError, EngineError, PromptRefused, check_decode
from atomicchat.engine.ext import load_ext
from atomicchat.engine.lib import C, recent_log, system_info
from atomicchat.engine.memory_check import check_memory
from atomicchat.engine.model import Context, Model, default_threads
from atomicchat.engine.repetition import LoopGuard
from atomicchat.engine.sampling import Sampler
from atomicchat.engine.types import EngineConfig, EngineInfo, Finished, GenParams, GenStats, Step
from atomicchat.engine.validate import DraftInfo, TargetInfo, check_pair, inspect_draft, inspect_target

_MIN_CTX = 16
# Load-time pricing of draft lengths (Engine._calibrate): at most this long; what it leaves unpriced,
# replies learn as they run.
CALIBRATION_BUDGET_S = 2.0
# Unfed plain steps priced at the end of it, until their price stops falling (`bare_settled`): the
# bare table drops the first (the switch back from fed steps) and keeps the last five. Right after
# other work a plain step runs slow for a while: on demo F32 (2-core Xeon with a 480 MiB L3 shared
# with other guests, 2026-12-07) 3.3-3.6 ms falling to a steady 1.65 over ~10 steps after the load's
# 8-row verifies (after 50 ms idle: 4.5, still 3.3 ten steps on). Six steps priced a plain run at
# 2.3-3.4 ms, and the engine drafted 41-99% of its steps at 0.76-0.94x of target-only.
BARE_CALIBRATION_STEPS = 1 + 2 * SETTLE_WINDOW  # the fewest `bare_settled` can stop at: the switch, two windows
BARE_CALIBRATION_MOST = 48
# The most conversation state a snapshot resize copies to keep the caches, for a moment, in host
# memory. The 9B pair keeps ~56 KiB a token (the target's attention KV ~32 in F16, the draft's ~24)
# beside ~53 MB of recurrent state: 512 MiB is ~8.5k tokens. Past it the next prompt is read again.
KEEP_STATE_MAX_BYTES = 512 << 20


def bare_settled(seconds: list[float]) -> bool:
    """Whether unfed plain steps timed in a row (`seconds`, the first a switch the table drops) have
    stopped getting cheaper (`draft_policy.settled` on the rest)."""
    return settled(seconds[1:])


def _snapshot(stats: GenStats) -> GenStats:
    """A copy of the running totals (what dataclasses.replace gives, without its per-field work)."""
    snap = object.__new__(GenStats)
    snap.__dict__.update(stats.__dict__)
    return snap


@dataclass(frozen=True)
class _Kept:
    """A conversation copied out of both caches across a context rebuild (`Engine._resize_rollback`)."""

    tokens: list[int]  # what the target cache held
    states: list[tuple[ctypes.Array, int]]  # llama_state_seq_get_data of the target, then the draft
    draft_end: int
    draft_kv_len: int


@dataclass(frozen=True)
class _Plan:
    """How one reply decodes: with the draft or not, its longest block, pinned or adaptive."""

    use_draft: bool
    n_max: int
    pinned: bool
    policy: DraftPolicy | FixedPolicy
    p_min: float = 0.0  # the draft's confidence cut for this reply (engine/draft_confidence.py)


def _count_step(stats: GenStats, acc: list[int], n_drafted: int) -> None:
    stats.n_steps += 1
    if n_drafted:
        stats.n_draft_steps += 1
        stats.n_drafted += n_drafted
        stats.n_accepted += len(acc) - 1


def _make_step(detok: Detokenizer, emit: list[int], n_acc: int, n_drafted: int, stats: GenStats) -> Step:
    """The Step for tokens `emit`, whose first n_acc (at most) came from accepted drafts."""
    n_ok = min(n_acc, len(emit))
    drafted_text = detok.feed(emit[:n_ok]) if n_ok else ""
    return Step(
        tokens=list(emit),
        text=drafted_text + detok.feed(emit[n_ok:]),
        from_draft=[True] * n_ok + [False] * (len(emit) - n_ok),
        n_drafted=n_drafted,
        n_accepted=n_acc if n_drafted else 0,
        stats=_snapshot(stats),
        draft_chars=len(drafted_text),
    )


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    x = np.asarray(a[:n], dtype=np.int64) != np.asarray(b[:n], dtype=np.int64)
    idx = int(np.argmax(x))
    return n if not x[idx] else idx


class Engine:
    """Owns both llama contexts. Construct, then call `generate` from the same thread.

    `target` and `tctx` exist from a successful construction until `close()`; everything the draft
    needs lives in `ds` (a DraftSide), which is None for a target-only engine."""

    target: Model
    tctx: Context

    def __init__(self, config: EngineConfig, progress: Callable[[str, float], None] | None = None) -> None:
        self.config = config
        self.draft: Model | None = None  # the draft's weights; its context is ds.ctx
        self.ds: DraftSide | None = None
        self._kv_ref: tuple[list[int], int] = ([], 0)  # (seq, n): the target cache holds seq[:n]
        self._ckpt_buf: ctypes.Array | None = None
        self._last_decode_pos = 0  # first position of the newest target decode (recurrent rollback bound)
        # Learned per loaded pair: verify/draft costs on this device, the draft's acceptance profile.
        self.policy: DraftPolicy | None = None
        self.policy_for_step: DraftPolicy | FixedPolicy = FixedPolicy(0)
        # when the last step's timed work ended: what lies between it and the next step's is that
        # step's untimed cost (DraftPolicy.overhead)
        self._t_mark = 0.0
        self._coast_left = 0  # plain steps `policy.coast` granted that this reply has not taken yet
        self.device_sampling = False
        self.tsamp: device_sampling.DeviceSampler | None = None  # the target's on-device chain
        check_p_min(config.draft_p_min)
        self.draft_p_min = DEFAULT_P_MIN if config.draft_p_min is None else float(config.draft_p_min)
        self._p_min = 0.0  # this reply's cut (_Plan.p_min), read by _draft_block
        tinfo = inspect_target(config.target_path)
        dinfo = inspect_draft(config.draft_path) if config.draft_path else None
        ext = None
        if dinfo is not None:
            check_pair(tinfo, dinfo)
            ext = load_ext()  # fail before loading gigabytes of weights
        self.tinfo: TargetInfo = tinfo
        self.dinfo: DraftInfo | None = dinfo
        self.block_size = dinfo.block_size if dinfo else 0
        self.draft_max = max(1, min(config.draft_max or self.block_size - 1, self.block_size - 1)) if dinfo else 0
        check_memory(tinfo, dinfo, max(config.n_ctx, _MIN_CTX), self.draft_max)  # before llama.cpp allocates
        try:
            self._load(progress, ext)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ loading
    def _load(self, progress: Callable[[str, float], None] | None, ext: object | None) -> None:
        c = C()
        cfg = self.config
        step_cb = (lambda stage: (lambda v: (progress(stage, v), True)[1])) if progress else (lambda stage: None)
        self.target = Model(Path(cfg.target_path), cfg.n_gpu_layers, step_cb("target"))
        device = device_info.describe(recent_log(40), bool(c.llama_supports_gpu_offload()), cfg.n_gpu_layers,
                                      self.target.n_layer)
        if self.dinfo is not None:
            self.draft = Model(Path(cfg.draft_path), cfg.n_gpu_layers, step_cb("draft"))  # type: ignore[arg-type]
        self.n_vocab = self.target.n_vocab
        # The context is what was asked for; the batch shrinks to fit it (not the other way round,
        # which turned --ctx 256 into 512). The draft block must still fit into one micro-batch.
        n_ctx = max(cfg.n_ctx, _MIN_CTX)
        if self.draft_max:
            self.draft_max = min(self.draft_max, n_ctx - 1)
        n_batch = min(max(cfg.n_batch, self.draft_max + 1, 1), n_ctx)
        self.device_sampling = device_sampling.wanted(cfg.device_sampling, device.gpu_layers_used)
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
        # off on the CPU where the build keeps one-row and batched sums alike (engine/attention.py)
        tp.flash_attn_type = self.flash_attn = attention.choose(system_info(), device.gpu_layers_used > 0)
        if self.device_sampling:
            tp.n_outputs_max_per_seq = n_batch  # a verify samples every row of its block
        if self.draft is not None and self.target.is_hybrid:
            tp.n_rs_seq = self.draft_max if cfg.n_rs_seq is None else cfg.n_rs_seq
        self._ctx_args = (tp, ext, threads, batch_threads)  # to make the contexts again
        self._open_contexts(*self._ctx_args)
        if self.draft is not None:
            self.policy = DraftPolicy(self.draft_max)

        self._init_template_and_info(device, n_ctx)
        self._refits_rollback = False  # the adaptive policy sizes a hybrid target's snapshots
        if self.policy is not None and not cfg.draft_max:  # a pinned length has nothing to choose
            self._calibrate(CALIBRATION_BUDGET_S)
            if self.target.is_hybrid and cfg.n_rs_seq is None:
                self._refits_rollback = True
                self._fit_rollback()
                self._rs_full = self.n_rs_seq

    def _open_contexts(self, tp: object, ext: object | None, threads: int, batch_threads: int) -> None:
        """The target context with params `tp`, then what hangs on it: the draft side (its context
        borrows the target's) and the on-device sampler."""
        c = C()
        self.tctx = Context(self.target, tp, "chat")
        self.n_ctx = self.tctx.n_ctx
        self.n_rs_seq = int(c.llama_n_rs_seq(self.tctx.ptr)) if self.target.is_hybrid else 0
        if self.draft is not None:
            self.ds = DraftSide(self.draft, self.tctx, ext, self.draft_max, threads, batch_threads,
                                self.device_sampling, self.flash_attn)
        if self.device_sampling:
            self.tsamp = device_sampling.DeviceSampler(self.tctx.ptr)

    def _fit_rollback(self) -> None:
        """Keep rollback snapshots only for drafts that could pay here. A hybrid target keeps
        n_rs_seq recurrent-state snapshots for rolling back rejected drafts, and every decode pays
        for them, plain steps included (tiny-qwen35 on a 2-core EPYC: 12% slower per plain step at
        15 than at 0). When the load-time pricing says no draft longer than k could beat a plain
        step even at the best acceptance drafts reach (DraftPolicy.longest_useful), the contexts are
        made again (nothing is cached yet) with k snapshots; a longer draft, should one ever be
        chosen, rolls back through a checkpoint."""
        assert self.policy is not None
        keep = self.policy.longest_useful()
        if keep < self.n_rs_seq:
            self._resize_rollback(keep)

    def _refit_rollback(self) -> None:
        """Before a reply that the adaptive policy drafts: keep the hybrid target's snapshots only
        while a drafted token could be accepted (DraftPolicy.rollback_wanted). The contexts are made
        again with the conversation copied across (`_resize_rollback`); that happens once a
        session, when the sweep's drafts were all rejected, and once more if one is accepted later."""
        assert self.policy is not None
        want = self.policy.rollback_wanted(self._rs_full)
        if want != self.n_rs_seq:
            self._resize_rollback(want)

    def _resize_rollback(self, n_rs_seq: int) -> None:
        """Make the contexts again with `n_rs_seq` snapshots, keeping the conversation: both caches'
        sequence state is copied out and back (llama_state_seq_get/set_data), so the next reply
        reads only its new turn instead of the whole conversation again. Where it is too big to
        copy or llama.cpp refuses, the caches start empty, as a new context's do."""
        kept = self._copy_out_conversation()
        self._ctx_args[0].n_rs_seq = n_rs_seq  # type: ignore[attr-defined]
        self.remake_contexts()
        if kept is not None:
            self._copy_in_conversation(kept)

    def _copy_out_conversation(self) -> _Kept | None:
        """Both caches' sequence state and what they hold, or None (nothing cached, or too big)."""
        tokens = self._kv
        if not tokens:
            return None
        ctxs = [self.tctx] + ([self.ds.ctx] if self.ds is not None and self.ds.end else [])
        sizes = [int(C().llama_state_seq_get_size(ctx.ptr, 0)) for ctx in ctxs]
        if sum(sizes) > KEEP_STATE_MAX_BYTES:
            return None
        states = []
        for ctx, size in zip(ctxs, sizes):
            buf = (ctypes.c_uint8 * size)()
            n = int(C().llama_state_seq_get_data(ctx.ptr, buf, size, 0))
            if n == 0:
                return None
            states.append((buf, n))
        ds = self.ds
        return _Kept(list(tokens), states, ds.end if ds else 0, ds.kv_len if ds else 0)

    def _copy_in_conversation(self, kept: _Kept) -> None:
        """Put a `_copy_out_conversation` back into new contexts; all or nothing."""
        ctxs = [self.tctx] + ([self.ds.ctx] if self.ds is not None and len(kept.states) > 1 else [])
        for ctx, (buf, n) in zip(ctxs, kept.states):
            if int(C().llama_state_seq_set_data(ctx.ptr, buf, n, 0)) == 0:
                self._reset_cache()
                return
        self._kv = kept.tokens
        # The restored recurrent state has no snapshots behind it: no rollback may reach into it.
        self._last_decode_pos = len(kept.tokens) - 1
        if self.ds is not None:
            self.ds.end, self.ds.kv_len = kept.draft_end, kept.draft_kv_len

    def remake_contexts(self, reprice: bool = False) -> None:
        """Free the contexts and make them again with the same parameters: what either cache held
        is gone, the learned acceptance is kept, and a plain step is priced again, since it may cost
        something else now; with `reprice`, every size is, as at load (what a benchmark drawing a
        new placement stands for). Used to resize a hybrid target's snapshots, and by benchmarks to
        draw a new memory placement: where llama.cpp's buffers land can make every step of one
        engine up to 14% slower for its whole life (tiny-llama, 2-core EPYC: two engines on the
        same file ran 0.99-1.14x of each other across processes, steady within each; a new context
        re-draws), and 10 against 17 ms a plain step on SmolLM2 Q4_1 (2-core Xeon, 2026-12-05)."""
        self._close_contexts()
        self._open_contexts(*self._ctx_args)
        self._reset_cache()
        if self.policy is not None and self.ds is not None and not self.config.draft_max:
            if reprice:
                self.price_policy(self.policy)
            else:
                self.policy.forget_plain()
                self._calibrate(CALIBRATION_BUDGET_S / 4, sizes=[0])

    def price_policy(self, policy: DraftPolicy) -> None:
        """Forget what `policy` was told sizes cost and price them again on the contexts as they are,
        as a load prices the engine's own policy. A benchmark that puts two policies side by side on
        one engine (benchmarks/adaptive_bench.py --policy-from) prices each on the same placement."""
        if self.ds is None:
            raise EngineError("This engine has no draft: there is nothing to price.")
        with self.policy_swapped(policy):
            policy.forget_costs()
            self._calibrate(CALIBRATION_BUDGET_S)

    @contextmanager
    def policy_swapped(self, policy: DraftPolicy) -> Iterator[None]:
        """`policy` in place of the engine's own adaptive policy until the block ends (its pricing
        and the replies generated in it), the engine's own back afterwards whatever happened."""
        own, self.policy = self.policy, policy
        try:
            yield
        finally:
            self.policy = own

    def _calibrate(self, budget_s: float, sizes: list[int] | None = None) -> None:
        """Price a plain step and the policy's sweep sizes on a throwaway prompt while the model
        loads, so the first reply starts from this machine's costs instead of paying to learn them
        (each size's first call also builds its compute graph, 10-50x a normal call; on SmolLM2 Q4_1
        the sweep's long drafts made a first reply 0.79x of target-only). Only costs are learned:
        acceptance comes from real replies. Stops at the budget; sizes left unpriced are learned
        live as before. Both caches are emptied afterwards."""
        policy, ds = self.policy, self.ds
        assert policy is not None and ds is not None  # only called with a draft loaded
        clock = time.perf_counter
        t_stop = clock() + budget_s
        prompt = self.tokenize("Hello", add_special=True)[:8] or [0]
        host = self.tsamp is None  # replies take the argmax of every verify row on the host

        def decode(tokens: list[int], at: int) -> int:
            """The target's decode of `tokens` as a reply's step makes it, and the token to go on
            from: its last row's argmax where the host samples (unchanged where the device does)."""
            self._decode_target(tokens, at, "all")
            return int(self.tctx.logits(len(tokens), self.n_vocab).argmax(axis=1)[-1]) if host else tokens[0]

        try:
            self._prefill(prompt, 0, inject=True)
            pos, tok = len(prompt), prompt[-1]
            for k in policy.sweep_sizes() if sizes is None else sizes:
                for _ in range(3 if k else 4):  # CostTable drops a size's first call (graph build)
                    if clock() > t_stop or pos + k + 2 >= self.n_ctx:
                        return
                    t0 = clock()
                    drafts = ds.draft_block(tok, pos, k, k) if k else []
                    t1 = clock()
                    tok = decode([tok, *drafts], pos)
                    t2 = clock()
                    fed = 0.0
                    if k:
                        self._inject(k + 1, pos)
                    else:  # a fed plain step keeps its row for the next draft (DraftSide.stage),
                        ds.stage(self.tctx, pos)
                        fed = ds.row_seconds  # priced with its share of the decode that feeds it
                    policy.calibrate(k, (t1 - t0) + (clock() - t2) + fed, t2 - t1)
                    pos += k + 1
            # Unfed plain steps last (they leave the draft's context behind): what a plain run
            # costs. Priced by the fed steps above alone, a plain step looked 20-26% dearer than
            # target-only ran (demo F32 on a 2-core Xeon, 2026-12-07: 2.09-2.14 ms against 1.70),
            # since feeding the draft takes the target's weights out of the caches; drafting then
            # looked to pay where every length lost to target-only (adaptive 0.91-0.94x of it).
            # They run until their price settles (`bare_settled`): right after other work a plain
            # step runs slow for several steps.
            bare = getattr(policy, "calibrate_bare", None)  # a policy from before it (benchmarks)
            timed: list[float] = []
            while bare is not None and (sizes is None or 0 in sizes) and not bare_settled(timed):
                if len(timed) >= BARE_CALIBRATION_MOST or clock() > t_stop or pos + 2 >= self.n_ctx:
                    return
                t1 = clock()
                tok = decode([tok], pos)
                timed.append(clock() - t1)
                bare(timed[-1])
                pos += 1
        finally:
            self._reset_cache()
            prepare = getattr(policy, "prepare", None)  # a policy from before it (benchmarks): none
            if prepare is not None:
                prepare()

    def _init_template_and_info(self, device: device_info.DeviceInfo, n_ctx: int) -> None:
        """Pick the chat template (a broken one is replaced now, not mid-reply) and build `info`."""
        gguf_template = self.tinfo.chat_template or self.target.chat_template()
        self.template = chat.pick_template(gguf_template, self.tinfo.arch)
        self.fallback_template = chat.fallback_template(self.tinfo.arch)
        notes = list(device.notes)
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
            device=device.text,
            gpu_layers_used=device.gpu_layers_used,
            flash_attn=attention.describe(self.flash_attn),
            has_chat_template=bool(gguf_template),
            looks_like_base_model=not gguf_template,
            is_hybrid=self.target.is_hybrid,
            n_vocab=self.n_vocab,
            notes=tuple(notes),
        )
        if gguf_template:
            probe = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
            try:
                self._with_template(chat.render, probe, None)
            except chat.TemplateError:
                pass  # the template refused this probe; real conversations are judged when they come

    # ------------------------------------------------------------------ prompts
    def tokenize(self, text: str, add_special: bool = True) -> list[int]:
        return self.target.tokenize(text, add_special)

    def detokenize(self, tokens: list[int]) -> str:
        d = Detokenizer(self.target.piece)
        return d.feed(tokens) + d.flush()

    def _template_kwargs(self, enable_thinking: bool | None, tools: list[dict] | None) -> dict:
        if enable_thinking is None and self.draft is not None:
            enable_thinking = False  # DFlash drafts are trained on non-thinking output
        if tools and not chat.takes_tools(self.template):
            raise PromptRefused("This model's chat template has no place for tools, so the model would never "
                                "see them; send the request without 'tools', or use a model whose template "
                                "describes tools (Qwen3.5 does).")
        bos = self.target.bos()
        eos = self.target.eos()
        return {
            "bos_token": self.target.token_text(bos) if bos >= 0 else "",
            "eos_token": self.target.token_text(eos) if eos >= 0 else "",
            "enable_thinking": enable_thinking,
            "tools": tools or None,
        }

    def _with_template(self, fn: Callable, messages: list[dict[str, Any]], enable_thinking: bool | None,
                       tools: list[dict] | None = None):
        """Render with the model's template; if it fails (not a deliberate refusal), switch to the
        built-in fallback for good and say so once in `info.notes`."""
        kwargs = self._template_kwargs(enable_thinking, tools)
        try:
            return fn(self.template, messages, **kwargs)
        except chat.TemplateRefusal:
            raise
        except chat.TemplateError as exc:
            if self.template == self.fallback_template:
                raise
            self._use_fallback(str(exc))
            return fn(self.template, messages, **self._template_kwargs(enable_thinking, tools))

    def _use_fallback(self, reason: str) -> None:
        self.template = self.fallback_template
        name = "Gemma" if self.template == chat.GEMMA else "ChatML"
        note = f"{reason} Using the built-in {name} chat format instead."
        self.info = replace(self.info, notes=(*self.info.notes, note))

    def render_chat(self, messages: list[dict[str, Any]], enable_thinking: bool | None = None,
                    tools: list[dict] | None = None) -> str:
        return self._with_template(chat.render, messages, enable_thinking, tools)

    def chat_prompt(self, messages: list[dict[str, Any]], enable_thinking: bool | None = None,
                    tools: list[dict] | None = None) -> list[int]:
        """Prompt tokens: the template's markup with special-token parsing, message contents without,
        so text a user types ("<|im_start|>", "<start_of_turn>model") stays text. `tools` (OpenAI
        tool objects) are refused with PromptRefused when the template has no place for them."""
        parts: list[tuple[str, bool]] = self._with_template(chat.render_parts, messages, enable_thinking, tools)
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
    def _inject(self, n_rows: int, pos0: int) -> None:
        assert self.ds is not None  # only DFlash paths feed the draft
        self.ds.inject(self.tctx, n_rows, pos0)

    def _decode_target(self, tokens: list[int], pos0: int, outputs: str) -> None:
        self._last_decode_pos = pos0
        check_decode(self.tctx.decode_tokens(tokens, pos0, outputs), "evaluating the model")

    def _prefill(self, tokens: list[int], start: int, inject: bool) -> None:
        nb = self.tctx.n_batch
        for s in range(start, len(tokens), nb):
            chunk = tokens[s : s + nb]
            self._decode_target(chunk, s, "last" if s + len(chunk) == len(tokens) else "none")
            if inject:
                self._inject(len(chunk), s)

    def _prepare_cache(self, prompt: list[int], use_draft: bool) -> int:
        """Keep the longest reusable prefix of both caches; return how many prompt tokens are cached.

        Both caches are trimmed to exactly what `_kv` says, every time (a trim with nothing to drop
        costs nothing), and any refusal empties that cache rather than leaving it unknown."""
        kv, ds = self._kv, self.ds
        common = min(_common_prefix(kv, prompt), len(prompt) - 1)
        if use_draft and ds is not None:
            common = min(common, ds.kv_len)
        if not self._can_trim(common):
            self._reset_cache()  # recurrent state cannot roll back that far
            return 0
        self._kv = kv[:common]
        if ds is not None and not ds.trim(common) and use_draft:
            self._reset_cache()  # the draft lost its features: both start over
            return 0
        return common

    def _can_trim(self, p0: int) -> bool:
        """Drop target positions p0.. . A recurrent (hybrid) target keeps per-token snapshots of the
        last decode only: llama.cpp's seq_rm says yes to any rollback up to n_rs_seq tokens, but one
        that reaches back past the last decode restores a state from the wrong step (seen: a reply
        regenerated after four single-token steps came out different). So refuse those here."""
        drops_tokens = p0 < len(self._kv)  # a trim to the end drops nothing and is always safe
        if drops_tokens and self.target.is_hybrid and p0 <= self._last_decode_pos:
            return False
        return self.tctx.seq_rm(p0)

    def _reset_cache(self) -> None:
        """Empty both caches; what `_kv` and the draft side say follows."""
        if getattr(self, "tctx", None) is not None:
            self.tctx.clear_memory()
        if self.ds is not None:
            self.ds.clear()
        self._kv = []
        self._last_decode_pos = 0

    def _save_checkpoint(self) -> int:
        c = C()
        flags = c.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
        size = int(c.llama_state_seq_get_size_ext(self.tctx.ptr, 0, flags))
        if self._ckpt_buf is None or len(self._ckpt_buf) < size:
            self._ckpt_buf = (ctypes.c_uint8 * size)()
        n = int(c.llama_state_seq_get_data_ext(self.tctx.ptr, self._ckpt_buf, size, 0, flags))
        if n == 0:
            raise DecodeError("Could not save the recurrent state before verifying a draft.")
        return n

    def _restore_checkpoint(self, n: int) -> None:
        c = C()
        assert self._ckpt_buf is not None  # saved by _save_checkpoint in this step
        flags = c.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
        if int(c.llama_state_seq_set_data_ext(self.tctx.ptr, self._ckpt_buf, n, 0, flags)) == 0:
            raise DecodeError("Could not restore the recurrent state after a rejected draft.")

    def _plain_step(self, id_last: int, pos: int, sampler: Sampler) -> list[int]:
        self._decode_target([id_last], pos, "all")
        if self.tsamp is not None:
            tok = self.tsamp.token(0)
        elif sampler.greedy:  # what sampler.sample_row does for greedy, minus a call layer
            tok = int(self.tctx.logits(1, self.n_vocab)[0].argmax())
        else:
            tok = sampler.sample_row(self.tctx.ptr, 0, None)
        return [tok]

    def _draft_block(self, id_last: int, pos: int, n_max: int, n_use: int) -> list[int]:
        assert self.ds is not None  # only DFlash steps draft
        return self.ds.draft_block(id_last, pos, n_max, n_use, self._p_min)

    def _dflash_step(
        self, id_last: int, pos: int, n_max: int, n_use: int, sampler: Sampler, stats: GenStats
    ) -> tuple[list[int], int]:
        """One draft + verify + rollback step. Returns (accepted prefix + target token, n drafted)."""
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
        policy = self.policy_for_step
        policy.overhead(t0 - self._t_mark)
        policy.record(n, n_acc, draft_s, t2 - t1, asked=n_use)  # n < n_use: the confidence cut
        self._t_mark = t3
        return acc, n

    # ------------------------------------------------------------------ generation
    def generate(
        self,
        prompt: list[int],
        params: GenParams = GenParams(),
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[Step | Finished]:
        """Yield a Step per decode step, then one Finished. Safe to abandon between steps."""
        self._check_prompt(prompt)
        plan = self._plan(params)
        if self._refits_rollback and isinstance(plan.policy, DraftPolicy):  # the adaptive policy
            self._refit_rollback()
        self.policy_for_step = plan.policy
        self._p_min = plan.p_min
        plan.policy.begin_reply()
        stats = GenStats(n_prompt=len(prompt))
        sampler = Sampler(params, self.n_vocab)
        if self.tsamp is not None and not params.greedy:
            self.tsamp.use(params, sampler.seed)  # the same chain and seed, run in the graph
        detok = Detokenizer(self.target.piece)
        seq = list(prompt)  # prompt + every sampled token
        out: list[int] = []
        stop = should_stop or (lambda: False)
        loops = LoopGuard() if params.stop_loops else None
        try:
            t0 = time.perf_counter()
            cached = self._prepare_cache(prompt, plan.use_draft)
            stats.n_prompt_cached = cached
            self._prefill(prompt, cached, inject=plan.use_draft)
            first = self._first_token(sampler)
            pos = len(prompt)
            self._commit(seq, pos, plan.use_draft)
            stats.prefill_seconds = time.perf_counter() - t0
            t_gen = self._t_mark = time.perf_counter()
            acc, n_drafted = [first], 0
            while True:
                _count_step(stats, acc, n_drafted)
                seq.extend(acc)
                emit, reason = (acc[:-1], "eos") if self.target.is_eog(acc[-1]) else (acc, None)
                if loops is not None and (j := loops.feed_all(emit)) is not None:
                    emit, reason = emit[: j + 1], "repetition"  # token by token: the same cut with or without a draft
                out.extend(emit)
                stats.n_generated = len(out)
                stats.generate_seconds = time.perf_counter() - t_gen
                if reason is None and len(out) >= params.max_tokens:
                    reason = "length"
                if reason is None and pos + 1 >= self.n_ctx:  # prompt + output fill the context
                    reason = "context"
                self._commit(seq, pos, plan.use_draft)
                yield _make_step(detok, emit, len(acc) - 1, n_drafted, stats)
                if reason is None and stop():
                    reason = "cancelled"
                if reason is not None:
                    break
                acc, n_drafted = self._step(plan, seq[-1], pos, params.max_tokens - len(out), sampler, stats)
                pos += len(acc)
            tail = detok.flush()
            if tail:
                yield Step(tokens=[], text=tail, from_draft=[], n_drafted=0, n_accepted=0, stats=stats)
            yield Finished(reason=reason, stats=replace(stats), tokens=out, text=self.detokenize(out))
        except GeneratorExit:
            raise  # abandoned at a yield: the caches were committed just before it
        except BaseException:
            self._reset_cache()  # failed mid-step (llama.cpp, the sampler, a callback, Ctrl-C)
            raise
        finally:
            self._give_back_coast(plan.policy)
            sampler.close()
            if self.tsamp is not None and not params.greedy:
                self.tsamp.use(None)

    def _check_prompt(self, prompt: list[int]) -> None:
        """Refuse, with a sentence, what llama.cpp would fail or assert on."""
        if "tctx" not in self.__dict__:
            raise EngineError("The model was unloaded; load it again to continue.")
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

    def _plan(self, params: GenParams) -> _Plan:
        use_draft = bool(params.use_draft and self.ds is not None)
        n_max = min(params.draft_max or self.draft_max, self.draft_max) if use_draft else 0
        pinned = bool(params.draft_max or self.config.draft_max) or self.policy is None
        policy = FixedPolicy(n_max) if pinned or not use_draft or self.policy is None else self.policy
        p_min = self.draft_p_min if params.draft_p_min is None else params.draft_p_min
        return _Plan(use_draft, n_max, pinned, policy, p_min if use_draft else 0.0)

    def _first_token(self, sampler: Sampler) -> int:
        """The token after the prompt, from the prefill's last row."""
        if self.tsamp is not None:
            return self.tsamp.token(-1)
        row = self.tctx.logits_last(self.n_vocab) if sampler.greedy else None
        return sampler.sample_row(self.tctx.ptr, -1, row)

    def _step(
        self, plan: _Plan, id_last: int, pos: int, remaining: int, sampler: Sampler, stats: GenStats
    ) -> tuple[list[int], int]:
        """One decode step after id_last at pos: a DFlash step of the length the policy picks, or a
        plain one. Returns (new tokens, n drafted)."""
        if self._coast_left:  # plain steps `coast` granted: nothing to ask, feed or price
            self._coast_left -= 1
            acc, _, self._t_mark = self._timed_plain_step(id_last, pos, sampler, stats)
            return acc, 0
        policy = plan.policy
        limit = min(plan.n_max, remaining - 1, self.n_ctx - pos - 2) if plan.use_draft else 0
        granted = policy.coast(limit) if limit >= 1 else 0  # deep in a plain run: steps to take unasked
        if granted:
            # Only steps that would still have a limit of 1 or more: a reply's last step is asked.
            self._coast_left = min(granted - 1, remaining - 2, self.n_ctx - pos - 3)
            if granted - 1 > self._coast_left:
                policy.uncoast(granted - 1 - self._coast_left)
            acc, _, self._t_mark = self._timed_plain_step(id_last, pos, sampler, stats)
            return acc, 0
        n_use = policy.choose(limit) if limit >= 1 else 0
        block = plan.n_max if plan.pinned else n_use  # a pinned length keeps its trained block
        if n_use >= 1 and pos + block < self.n_ctx:
            return self._dflash_step(id_last, pos, block, n_use, sampler, stats)
        acc, t1, t2 = self._timed_plain_step(id_last, pos, sampler, stats)
        if plan.use_draft:
            policy.overhead(t1 - self._t_mark)
            feed = policy.needs_features()  # long plain runs skip feeding the draft
            if feed:  # kept on the host, fed to the draft in one batch when it drafts next
                self.ds.stage(self.tctx, pos)  # type: ignore[union-attr]
            t3 = time.perf_counter()
            stats.draft_seconds += t3 - t2
            # priced with its share of the decode that will feed the draft its row
            fed_s = t3 - t2 + (self.ds.row_seconds if feed else 0.0)  # type: ignore[union-attr]
            policy.record(0, 0, fed_s, t2 - t1, fed=feed)  # the decode and the feeding apart
            t2 = t3
        self._t_mark = t2
        return acc, 0

    def _timed_plain_step(
        self, id_last: int, pos: int, sampler: Sampler, stats: GenStats
    ) -> tuple[list[int], float, float]:
        """A plain step, its decode counted as verify time. Returns (the token, start, end)."""
        t1 = time.perf_counter()
        acc = self._plain_step(id_last, pos, sampler)
        t2 = time.perf_counter()
        stats.verify_seconds += t2 - t1
        return acc, t1, t2

    def _give_back_coast(self, policy: DraftPolicy | FixedPolicy) -> None:
        """Return to the policy the coasted steps it granted that the reply ended before taking."""
        if self._coast_left:
            policy.uncoast(self._coast_left)
            self._coast_left = 0

    def _commit(self, seq: list[int], pos: int, use_draft: bool) -> None:
        """Record what the caches hold: every token before position `pos`. `seq` only ever grows
        at its end, so keeping (seq, pos) is enough; the copy is made when `_kv` is read."""
        self._kv_ref = (seq, pos)
        if use_draft and self.ds is not None:
            self.ds.kv_len = pos

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
        """Free in the order llama.cpp needs: draft context, target context, then the models.
        Afterwards the engine has no `target`/`tctx`; `generate` says it is closed."""
        self._close_contexts()
        self.__dict__.pop("tctx", None)
        for attr in ("draft", "target"):
            obj = self.__dict__.get(attr)
            if obj is not None:
                obj.close()
        self.draft = None
        self.__dict__.pop("target", None)

    def _close_contexts(self) -> None:
        """What `_open_contexts` made, in the order llama.cpp needs: the draft side (its context
        borrows the target's), the on-device sampler, then the target context. Each becomes None."""
        for attr in ("ds", "tsamp", "tctx"):
            obj = self.__dict__.get(attr)
            if obj is not None:
                obj.close()
            setattr(self, attr, None)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
