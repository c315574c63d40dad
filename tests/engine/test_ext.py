"""The llama-ext.h bindings: present in the pinned build, and a clear error when they are not."""

from __future__ import annotations

import pytest

from atomicchat.engine import MissingSymbolError
from atomicchat.engine import ext as ext_mod


def test_symbols_bind_in_installed_libllama():
    e = ext_mod.load_ext()
    for name in ("set_embeddings_layer_inp", "get_embeddings_layer_inp", "model_target_layer_ids"):
        assert callable(getattr(e, name))


def test_missing_symbols_named_in_message(monkeypatch):
    class FakeLib:
        pass

    class FakeC:
        _lib = FakeLib()

        def __getattr__(self, name):
            from atomicchat.engine.lib import C

            return getattr(C(), name)

    monkeypatch.setattr(ext_mod, "_ext", None)
    monkeypatch.setattr(ext_mod, "C", lambda: FakeC())
    with pytest.raises(MissingSymbolError, match="llama_get_embeddings_layer_inp.*0.3.36"):
        ext_mod.load_ext()
