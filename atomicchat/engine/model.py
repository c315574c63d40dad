"""Thin owners of llama.cpp models, contexts and batches: each frees what it allocated, in order."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from atomicchat.engine.errors import ModelLoadError
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
        return bool(C().llama_vocab_is_eog(self.vocab, token))

    def token_text(self, token: int) -> str:
        raw = C().llama_vocab_get_text(self.vocab, token)
        return raw.decode("utf-8", errors="replace") if raw else ""

    def bos(self) -> int:
        return int(C().llama_vocab_bos(self.vocab))

    def eos(self) -> int:
        return int(C().llama_vocab_eos(self.vocab))

    def tokenize(self, text: str, add_special: bool, parse_special: bool = True) -> list[int]:
        c = C()
        raw = text.encode("utf-8")
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


class Context:
    """A llama_context plus one reusable llama_batch_ext sized to n_batch."""

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
        self.batch = c.llama_batch_ext_init(ptr)
        if not self.batch:
            c.llama_free(ptr)
            raise ModelLoadError(f"Could not allocate a batch for the {what} context.")
        self._pos1 = (c.llama_pos * 4)()

    # --- batch building -------------------------------------------------------------------------
    def clear_batch(self) -> None:
        C().llama_batch_ext_clear(self.batch)

    def add_token(self, token: int, pos: int, output: bool) -> None:
        c = C()
        idx = c.llama_batch_ext_add_token(self.batch, 0, token)
        if idx < 0:
            raise ModelLoadError(f"internal: batch add failed ({idx})")
        self._pos1[0] = pos
        c.llama_batch_ext_set_pos(self.batch, idx, self._pos1)
        if output:
            c.llama_batch_ext_set_output_logits(self.batch, idx, True)

    def add_tokens(self, tokens: list[int], pos0: int, outputs: str) -> None:
        """outputs: 'all', 'last' or 'none'."""
        last = len(tokens) - 1
        for i, t in enumerate(tokens):
            self.add_token(t, pos0 + i, outputs == "all" or (outputs == "last" and i == last))

    def add_embd_rows(self, rows: np.ndarray, pos0: int, n_pos: int) -> None:
        """Append feature rows (float32, C-contiguous) at positions pos0.. (n_pos values per entry)."""
        c = C()
        width = rows.shape[1]
        pos = (c.llama_pos * 4)()
        base = rows.ctypes.data
        stride = rows.strides[0]
        fptr = ctypes.POINTER(ctypes.c_float)
        for i in range(rows.shape[0]):
            embd = c.llama_embd(ctypes.cast(base + i * stride, fptr), 1, width)
            idx = c.llama_batch_ext_add_embd(self.batch, 0, embd)
            if idx < 0:
                raise ModelLoadError(f"internal: embedding add failed ({idx})")
            p = pos0 + i
            pos[0] = p
            if n_pos > 1:
                pos[1] = p
                pos[2] = p
                pos[3] = 0
            c.llama_batch_ext_set_pos(self.batch, idx, pos)

    def process(self) -> int:
        return int(C().llama_process(self.ptr, C().LLAMA_PROCESS_TYPE_DECODE, self.batch))

    # --- outputs --------------------------------------------------------------------------------
    def logits(self, n_rows: int, n_vocab: int) -> np.ndarray:
        """Zero-copy view of the first n_rows output rows (valid until the next decode)."""
        ptr = C().llama_get_logits(self.ptr)
        return np.ctypeslib.as_array(ptr, shape=(n_rows, n_vocab))

    def logits_last(self, n_vocab: int) -> np.ndarray:
        ptr = C().llama_get_logits_ith(self.ptr, -1)
        return np.ctypeslib.as_array(ptr, shape=(n_vocab,))

    # --- memory ---------------------------------------------------------------------------------
    def seq_rm(self, p0: int, p1: int = -1) -> bool:
        return bool(C().llama_memory_seq_rm(self.mem, 0, p0, p1))

    def pos_max(self) -> int:
        return int(C().llama_memory_seq_pos_max(self.mem, 0))

    def clear_memory(self) -> None:
        C().llama_memory_clear(self.mem, True)

    def close(self) -> None:
        c = C()
        if getattr(self, "batch", None):
            c.llama_batch_ext_free(self.batch)
            self.batch = None
        if getattr(self, "ptr", None):
            c.llama_free(self.ptr)
            self.ptr = None
