"""The model manager's facade (atomicchat.models.service) lets only its own errors out."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomicchat.models import errors
from atomicchat.models.service import ModelService


@pytest.fixture
def service(tmp_path: Path) -> ModelService:
    return ModelService(tmp_path / "registry.json")


def test_engine_and_os_errors_become_models_errors_with_the_same_sentence(service, tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model" * 10)
    with pytest.raises(errors.InvalidModelError, match="is not a GGUF model file") as info:
        service.import_gguf(bad)
    from atomicchat.engine.errors import EngineError

    assert isinstance(info.value.__cause__, EngineError)
    with pytest.raises(errors.ModelsError):
        service.import_gguf(tmp_path / "missing.gguf")
    with pytest.raises(errors.RegistryError):
        service.remove("no-such-key")


def test_the_translation_keeps_the_sentences_the_manager_showed():
    e = errors.as_models_error(PermissionError(13, "Permission denied", "/m.gguf"))
    assert isinstance(e, errors.FileAccessError)
    assert str(e) == "A file could not be read or written: Permission denied (/m.gguf)."
    e = errors.as_models_error(ValueError("boom"))
    assert isinstance(e, errors.UnexpectedError) and str(e) == "Something went wrong (ValueError: boom)."
    same = errors.DownloadCancelled("cancelled")
    assert errors.as_models_error(same) is same


def test_mark_used_never_fails(service, tmp_path, monkeypatch):
    def broken(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(type(service.registry), "mark_used", broken)
    service.mark_used(tmp_path / "m.gguf")  # no exception
