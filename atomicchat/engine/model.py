"""Thin owners of llama.cpp models, contexts and batches: each frees what it allocated, in order."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from atomicchat.engine.errors import DecodeError, EngineError, ModelLoadError
from atomicchat.engine.lib import C, clear_log, recent_log


def default_threads(model_bytes: int) -> int:
    """Physical cores, but 1 for tiny models: there, thread barriers cost more than the math
    (measured on the tiny test target: 5266 tok/s on 1 thread vs 478 on 2 with a busy core)."""
    return 1 if model_bytes < 64 * 1024 * 1024 else physical_cores()


def physical_cores() -> int:
    try:
        import psutil

        n = psutil.cpu_count(logical=False)
    except Exception:
        n = None
    return max(1, n or os.cpu_count() or 1)


def cpu_has_amx(cpuinfo: str | None = None) -> bool:
    """True on x86 CPUs with Intel AMX (Sapphire Rapids and later), read from /proc/cpuinfo."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
                cpuinfo = f.read(200_000)
        except OSError:
            return False
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags = set(line.partition(":")[2].split())
            return bool(flags & {"amx_int8", "amx_tile"})
    return False


def use_extra_buffers() -> bool:
    """Whether llama.cpp may repack weights into its extra CPU buffer types.

    On AMX CPUs the vendored llama.cpp routes Q4_K/Q4_1 matmuls through its AMX buffer type, and
    `ggml_backend_amx_mul_mat` segfaults on the first decode (seen here with Gemma-3 270M Q4_K_M and
    SmolLM2-135M Q4_1; llama-cpp-python's own `Llama` crashes the same way). Without the extra buffer
    types the same files decode correctly. ATOMICCHAT_EXTRA_BUFTS=1/0 forces the choice."""
    forced = os.environ.get("ATOMICCHAT_EXTRA_BUFTS")
    if forced in ("0", "1"):
        return forced == "1"
    return not cpu_has_amx()


def _reason() -> str:
    lines = recent_log(3, errors_only=True)
    return f" llama.cpp said: {' | '.join(lines)}" if lines else ""


class Model:
    """A loaded GGUF model and its vocabulary."""

    def __init__(self, path: Path, n_gpu_layers: int, progress: Callable[[float], bool] | None = None) -> None:
        c = C()
        self.path = path
        params = c.llama_model_default_params()
        params.n_gpu_layers = n_gpu_layers if n_gpu_layers >= 0 else 999
        params.use_extra_bufts = use_extra_buffers()
        self._progress_cb = None
        if progress is not None:

            def _cb(value: float, _user: ctypes.c_void_p) -> bool:
                try:
                    return bool(progress(float(value)))
                except Exception:
                    return True

            self._progress_cb = c.llama_progress_callback(_cb)
            params.progress_callback = self._progress_cb
        clear_log()
        ptr = c.llama_model_load_from_file(str(path).encode("utf-8"), params)
        if not ptr:
            raise ModelLoadError(f"llama.cpp could not load {path.name}.{_reason()}")
        self.ptr = ptr
        self.vocab = c.llama_model_get_vocab(ptr)
        self.n_vocab = int(c.llama_vocab_n_tokens(self.vocab))
        self.n_embd = int(c.llama_model_n_embd(ptr))
        self.n_layer = int(c.llama_model_n_layer(ptr))
        self.is_hybrid = bool(c.llama_model_is_hybrid(ptr)) or bool(c.llama_model_is_recurrent(ptr))
        self.n_gpu_layers_requested = params.n_gpu_layers
        self._eog: dict[int, bool] = {}  # per-token answers cached: the decode loops ask every step
        self._pieces: dict[tuple[int, bool], bytes] = {}

    def meta(self, key: str, size: int = 256) -> str | None:
        c = C()
        buf = ctypes.create_string_buffer(size)
        n = c.llama_model_meta_val_str(self.ptr, key.encode(), buf, size)
        if n < 0:
            return None
        if n >= size:
            return self.meta(key, n + 1)
        return buf.value.decode("utf-8", errors="replace")

    def chat_template(self) -> str | None:
        raw = C().llama_model_chat_template(self.ptr, None)
        return raw.decode("utf-8", errors="replace") if raw else None

    def is_eog(self, token: int) -> bool:
        r = self._eog.get(token)
        if r is None:
            r = self._eog[token] = bool(C().llama_vocab_is_eog(self.vocab, token))
        return r

    def token_text(self, token: int) -> str:
        raw = C().llama_vocab_get_text(self.vocab, token)
        return raw.decode("utf-8", errors="replace") if raw else ""

    def bos(self) -> int:
        return int(C().llama_vocab_bos(self.vocab))

    def eos(self) -> int:
        return int(C().llama_vocab_eos(self.vocab))

    def tokenize(self, text: str, add_special: bool, parse_special: bool = True) -> list[int]:
        c = C()
        try:
            raw = text.encode("utf-8")
        except UnicodeEncodeError:
            raise EngineError("The text contains characters that are not valid Unicode (lone surrogates).") from None
        cap = len(raw) + 16
        buf = (c.llama_token * cap)()
        n = c.llama_tokenize(self.vocab, raw, len(raw), buf, cap, add_special, parse_special)
        if n < 0:
            cap = -n
            buf = (c.llama_token * cap)()
            n = c.llama_tokenize(self.vocab, raw, len(raw), buf, cap, add_special, parse_special)
        if n < 0:
            raise ModelLoadError("The text could not be tokenized.")
        return list(buf[:n])

    def piece(self, token: int, special: bool = False) -> bytes:
        key = (token, special)
        r = self._pieces.get(key)
        if r is None:
            r = self._pieces[key] = self._piece(token, special)
        return r

    def _piece(self, token: int, special: bool) -> bytes:
        c = C()
        buf = ctypes.create_string_buffer(64)
        n = c.llama_token_to_piece(self.vocab, token, buf, 64, 0, special)
        if n < 0:
            buf = ctypes.create_string_buffer(-n)
            n = c.llama_token_to_piece(self.vocab, token, buf, -n, 0, special)
        return buf.raw[: max(n, 0)]

    def close(self) -> None:
        if getattr(self, "ptr", None):
            C().llama_model_free(self.ptr)
            self.ptr = None


class Batch:
    """A `llama_batch` (sequence 0 only) over Python-owned numpy buffers, refilled with vectorised
    copies instead of one ctypes call per token. `llama_decode` turns it into the same
    `llama_batch_ext` that `llama_process` takes (llama_batch_compat, src/llama-batch.cpp), so the
    decode is identical; it just costs one ctypes call instead of three per token.

    Embedding batches keep positions section-major (`pos[j*n_tokens + i]`, j < n_pos), which is
    how llama_batch_compat reads the 4 M-RoPE positions of an embedding row."""

    def __init__(self, capacity: int, n_embd: int = 0, max_pos: int = 0) -> None:
        c = C()
        self.capacity = capacity
        self.n_embd = n_embd
        # positions are copied out of this ramp: one slice copy instead of an add
        self.arange = np.arange(max(max_pos, 0) + capacity, dtype=np.int32)
        self.pos = np.zeros(4 * capacity, dtype=np.int32)
        self.n_seq_id = np.ones(capacity, dtype=np.int32)
        self.seq = np.zeros(capacity, dtype=np.int32)  # every row in seq 0
        base = self.seq.ctypes.data
        self._seq_ptrs = (ctypes.c_void_p * (capacity + 1))(*[base + 4 * i for i in range(capacity)], None)
        self.logits = np.zeros(capacity, dtype=np.int8)
        self._ones = 0  # logits[:_ones] are known to be 1 (a repeated 'all' batch skips the fill)
        b = c.llama_batch()
        b.n_tokens = 0
        if n_embd:
            self.token = None
            self.embd = np.zeros((capacity, n_embd), dtype=np.float32)
            self.embd_addr = self.embd.ctypes.data
            b.embd = self.embd.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        else:
            self.embd = None
            self.token = np.zeros(capacity, dtype=np.int32)
            self._token_c = (c.llama_token * capacity).from_buffer(self.token)  # list -> C ints, fastest
            b.token = self.token.ctypes.data_as(ctypes.POINTER(c.llama_token))
        b.pos = self.pos.ctypes.data_as(ctypes.POINTER(c.llama_pos))
        b.n_seq_id = self.n_seq_id.ctypes.data_as(ctypes.POINTER(ctypes.c_int32))
        b.seq_id = ctypes.cast(self._seq_ptrs, ctypes.POINTER(ctypes.POINTER(c.llama_seq_id)))
        b.logits = self.logits.ctypes.data_as(ctypes.POINTER(ctypes.c_int8))
        self.struct = b

    def set_tokens(self, tokens: Any, pos0: int, outputs: str | range) -> None:
        """tokens: a sequence of ids; outputs: 'all', 'last', 'none' or a range of rows."""
        n = len(tokens)
        if isinstance(outputs, range):  # only these rows (on-device sampling: nothing else is read)
            self._token_c[:n] = tokens
            self._set_pos(n, pos0)
            self.logits[:n] = 0
            self.logits[outputs] = 1
            self._ones = 0
            self.struct.n_tokens = n
            return
        if n == 1:  # target-only decoding: item assignment beats a numpy slice copy
            self.token[0] = tokens[0]
            self.pos[0] = pos0
            out = outputs != "none"
            self.logits[0] = out
            if not out:
                self._ones = 0
            elif self._ones < 1:
                self._ones = 1
            self.struct.n_tokens = 1
            return
        if not 0 < n <= self.capacity:
            raise DecodeError(f"internal: batch of {n} tokens does not fit {self.capacity}")
        self._token_c[:n] = tokens
        self._set_pos(n, pos0)
        lg = self.logits
        if outputs == "all":
            if self._ones < n:
                lg[:n] = 1
                self._ones = n
        else:
            lg[:n] = 0
            self._ones = 0
            if outputs == "last":
                lg[n - 1] = 1
        self.struct.n_tokens = n

    def _set_pos(self, n: int, pos0: int) -> None:
        if 0 <= pos0 and pos0 + n <= len(self.arange):
            self.pos[:n] = self.arange[pos0 : pos0 + n]
        else:
            np.add(self.arange[:n], pos0, out=self.pos[:n])

    def set_embd_positions(self, n: int, pos0: int, n_pos: int) -> None:
        """Positions pos0.. for the first n embedding rows (already written to `embd`), no outputs."""
        if not 0 < n <= self.capacity:
            raise DecodeError(f"internal: batch of {n} rows does not fit {self.capacity}")
        p = self.pos
        self._ones = 0
        if n == 1 and n_pos == 1:
            p[0] = pos0
            self.logits[0] = 0
            self.struct.n_tokens = 1
            return
        self._set_pos(n, pos0)
        if n_pos > 1:  # (p, p, p, 0), section-major
            p[n : 3 * n].reshape(2, n)[:] = p[:n]
            p[3 * n : n_pos * n] = 0
        self.logits[:n] = 0
        self.struct.n_tokens = n


def _addr_fn(fn: Any) -> Any:
    """A second binding of a ctypes function that returns the raw address (int) instead of a
    POINTER object, so a cached numpy view can be reused while the address stays the same."""
    lib = C()._lib
    f = lib[fn.__name__]  # CDLL.__getitem__ makes a new function object; `fn` is left untouched
    f.argtypes = fn.argtypes
    f.restype = ctypes.c_void_p
    return f


class _ViewCache:
    """numpy (rows, width) float32 views over a C buffer, rebuilt only when its address changes or
    more rows are needed than the cached view has."""

    __slots__ = ("addr", "arr", "width")

    def __init__(self, width: int) -> None:
        self.addr = None
        self.arr = None
        self.width = width

    def get(self, addr: int | None, n_rows: int) -> np.ndarray:
        if not addr:
            raise DecodeError("internal: llama.cpp returned no output buffer")
        arr = self.arr
        if addr != self.addr or arr is None or arr.shape[0] < n_rows:
            buf = (ctypes.c_float * (n_rows * self.width)).from_address(addr)
            arr = np.frombuffer(buf, dtype=np.float32).reshape(n_rows, self.width)
            self.addr, self.arr = addr, arr
        return arr[:n_rows]


class Context:
    """A llama_context plus reusable batches sized to n_batch (tokens; embedding rows on demand).

    Hot functions are bound once as attributes; outputs are read through cached numpy views."""

    def __init__(self, model: Model, params: Any, what: str) -> None:
        c = C()
        clear_log()
        ptr = c.llama_init_from_model(model.ptr, params)
        if not ptr:
            raise ModelLoadError(
                f"Could not create the {what} context for {model.path.name} "
                f"(context {params.n_ctx} tokens); try a smaller context size.{_reason()}"
            )
        self.ptr = ptr
        self.model = model
        self.mem = c.llama_get_memory(ptr)
        self.n_ctx = int(c.llama_n_ctx(ptr))
        self.n_batch = int(c.llama_n_batch(ptr))
        self.n_ubatch = int(c.llama_n_ubatch(ptr))
        self.batch = Batch(self.n_batch, max_pos=self.n_ctx)
        self.embd_batch: Batch | None = None
        self._decode = c.llama_decode
        self._seq_rm = c.llama_memory_seq_rm
        self._logits_addr = _addr_fn(c.llama_get_logits)
        self._logits = _ViewCache(model.n_vocab)

    # --- decoding -------------------------------------------------------------------------------
    def decode_tokens(self, tokens: Any, pos0: int, outputs: str | range) -> int:
        """Decode tokens at positions pos0..; outputs: 'all', 'last' or 'none'. Returns llama.cpp's code."""
        b = self.batch
        b.set_tokens(tokens, pos0, outputs)
        return int(self._decode(self.ptr, b.struct))

    def embd_rows(self, width: int) -> np.ndarray:
        """The (n_batch, width) float32 row buffer of the embedding batch, to fill before decode_embd."""
        eb = self.embd_batch
        if eb is None or eb.n_embd != width:
            eb = self.embd_batch = Batch(self.n_batch, width, max_pos=self.n_ctx)
        return eb.embd  # type: ignore[return-value]

    def decode_embd(self, n: int, pos0: int, n_pos: int) -> int:
        """Decode the first n rows of `embd_rows()` at positions pos0.. (n_pos values per row)."""
        eb = self.embd_batch
        assert eb is not None
        eb.set_embd_positions(n, pos0, n_pos)
        return int(self._decode(self.ptr, eb.struct))

    # --- outputs --------------------------------------------------------------------------------
    def logits(self, n_rows: int, n_vocab: int) -> np.ndarray:
        """Zero-copy view of the first n_rows output rows (valid until the next decode)."""
        if n_vocab != self._logits.width:
            self._logits = _ViewCache(n_vocab)
        return self._logits.get(self._logits_addr(self.ptr), n_rows)

    def logits_last(self, n_vocab: int) -> np.ndarray:
        ptr = C().llama_get_logits_ith(self.ptr, -1)
        return np.ctypeslib.as_array(ptr, shape=(n_vocab,))

    # --- memory ---------------------------------------------------------------------------------
    def seq_rm(self, p0: int, p1: int = -1) -> bool:
        return bool(self._seq_rm(self.mem, 0, p0, p1))

    def clear_memory(self) -> None:
        C().llama_memory_clear(self.mem, True)

    def close(self) -> None:
        if getattr(self, "ptr", None):
            C().llama_free(self.ptr)
            self.ptr = None
        self.batch = None  # type: ignore[assignment]
        self.embd_batch = None
