"""ctypes bindings for the experimental `llama-ext.h` symbols DFlash needs.

llama-cpp-python 0.3.36 does not bind these (its own `llama_cpp_ext` is internal). They are C++
functions, so the exported names are mangled: Itanium names were checked on Linux with `nm -D`;
the MSVC names follow the pattern llama-cpp-python uses and await a Windows check.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

from atomicchat.engine.errors import MissingSymbolError
from atomicchat.engine.lib import C


@dataclass(frozen=True)
class _Sym:
    names: tuple[str, str, str]  # plain, Itanium, MSVC x64
    argtypes: tuple[Any, ...]
    restype: Any


def _specs() -> dict[str, _Sym]:
    c = C()
    ctx, model = c.llama_context_p_ctypes, c.llama_model_p_ctypes
    return {
        "set_embeddings_layer_inp": _Sym(
            (
                "llama_set_embeddings_layer_inp",
                "_Z30llama_set_embeddings_layer_inpP13llama_contextjb",
                "?llama_set_embeddings_layer_inp@@YAXPEAUllama_context@@I_N@Z",
            ),
            (ctx, ctypes.c_uint32, ctypes.c_bool),
            None,
        ),
        "get_embeddings_layer_inp": _Sym(
            (
                "llama_get_embeddings_layer_inp",
                "_Z30llama_get_embeddings_layer_inpP13llama_contextj",
                "?llama_get_embeddings_layer_inp@@YAPEAMPEAUllama_context@@I@Z",
            ),
            (ctx, ctypes.c_uint32),
            ctypes.POINTER(ctypes.c_float),
        ),
        "model_target_layer_ids": _Sym(
            (
                "llama_model_target_layer_ids",
                "_Z28llama_model_target_layer_idsPK11llama_model",
                "?llama_model_target_layer_ids@@YAPEBHPEBUllama_model@@@Z",
            ),
            (model,),
            ctypes.POINTER(ctypes.c_int32),
        ),
        "model_target_layer_ids_n": _Sym(
            (
                "llama_model_target_layer_ids_n",
                "_Z30llama_model_target_layer_ids_nPK11llama_model",
                "?llama_model_target_layer_ids_n@@YAIPEBUllama_model@@@Z",
            ),
            (model,),
            ctypes.c_uint32,
        ),
        "model_dflash_selector_top_k": _Sym(
            (
                "llama_model_dflash_selector_top_k",
                "_Z33llama_model_dflash_selector_top_kPK11llama_model",
                "?llama_model_dflash_selector_top_k@@YAHPEBUllama_model@@@Z",
            ),
            (model,),
            ctypes.c_int32,
        ),
    }


class Ext:
    """The bound functions, as attributes. Construct with `load_ext()`."""

    set_embeddings_layer_inp: Any
    get_embeddings_layer_inp: Any
    model_target_layer_ids: Any
    model_target_layer_ids_n: Any
    model_dflash_selector_top_k: Any


_ext: Ext | None = None


def _bind(lib: Any, sym: _Sym) -> Any | None:
    for name in sym.names:
        try:
            fn = getattr(lib, name)
        except AttributeError:
            continue
        fn.argtypes = list(sym.argtypes)
        fn.restype = sym.restype
        return fn
    return None


def load_ext() -> Ext:
    """Bind every symbol or raise MissingSymbolError naming the missing ones."""
    global _ext
    if _ext is not None:
        return _ext
    lib = C()._lib
    ext = Ext()
    missing = []
    for attr, sym in _specs().items():
        fn = _bind(lib, sym)
        if fn is None:
            missing.append(sym.names[0])
        setattr(ext, attr, fn)
    if missing:
        raise MissingSymbolError(
            "The installed llama.cpp library has no DFlash support (missing: "
            + ", ".join(missing)
            + "). Atomic Chat needs llama-cpp-python 0.3.36; DFlash is off until it is installed."
        )
    _ext = ext
    return ext
