"""Installed-model registry: import + pairing rules, atomic storage, and careful removal."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from atomicchat.engine.errors import ModelFileError
from atomicchat.models.downloads import DownloadJob
from atomicchat.models.errors import RegistryError
from atomicchat.models.registry import Registry
from tests.models.conftest import DRAFT_REPO, TARGET_FILE, TARGET_REPO, Served
from tests.models.ggufs import OTHER_TOKENS, make_draft, make_target


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    d = tmp_path / "mine"
    d.mkdir()
    paths = {"target": d / "t.gguf", "draft": d / "d.gguf", "other": d / "other.gguf", "junk": d / "junk.gguf"}
    make_target(paths["target"], pad_bytes=64)
    make_draft(paths["draft"], pad_bytes=64)
    make_draft(paths["other"], tokens=OTHER_TOKENS, pad_bytes=64)
    paths["junk"].write_bytes(b"not a model at all" * 10)
    return paths


def test_import_pairs_only_matching_vocabularies(files: dict[str, Path]) -> None:
    reg = Registry()
    t = reg.import_gguf(files["target"])
    assert t.file.role == "target" and t.file.key == f"local:{files['target'].resolve()}" and t.paired_with == ()
    good = reg.import_gguf(files["draft"])
    assert good.paired_with == (t.file.key,)
    bad = reg.import_gguf(files["other"])
    assert bad.paired_with == ()
    ((key, reason),) = bad.not_paired
    assert key == t.file.key and "different tokens" in reason and "same tokenizer" in reason
    (pair,) = reg.pairs()
    assert (pair.target.key, pair.draft.key) == (t.file.key, good.file.key)
    assert files["target"].exists()  # imported files are never moved or copied


def test_import_rejects_a_non_gguf_with_the_reason(files: dict[str, Path], tmp_path: Path) -> None:
    reg = Registry()
    with pytest.raises(ModelFileError, match="not a GGUF model file"):
        reg.import_gguf(files["junk"])
    with pytest.raises(ModelFileError, match="not found"):
        reg.import_gguf(tmp_path / "absent.gguf")
    with pytest.raises(RegistryError, match="No installed model 'local:/nope'"):
        reg.import_gguf(files["draft"], pair_with="local:/nope")
    assert [f.role for f in reg.files()] == ["draft"]  # the valid draft is still registered


def test_changed_file_is_no_longer_runnable(files: dict[str, Path]) -> None:
    reg = Registry()
    reg.import_gguf(files["target"])
    reg.import_gguf(files["draft"])
    assert len(reg.pairs()) == 1
    with open(files["draft"], "ab") as fh:
        fh.write(b"\0")
    assert reg.pairs() == []
    assert not Registry.is_intact(reg.get(f"local:{files['draft'].resolve()}"))


def test_storage_is_atomic_json_and_survives_damage(files: dict[str, Path]) -> None:
    reg = Registry()
    reg.import_gguf(files["target"])
    data = json.loads(reg.path.read_text())
    assert data["schema"] == 1 and len(data["files"]) == 1
    assert [p.name for p in reg.path.parent.iterdir() if p.name.endswith(".tmp")] == []
    reg.path.write_text("{ half a file")
    assert Registry().files() == []  # damaged list moved aside, not fatal
    assert any(p.name.startswith("models.json.corrupt-") for p in reg.path.parent.iterdir())
    reg.import_gguf(files["draft"])
    assert [f.role for f in Registry().files()] == ["draft"]


def test_remove_hub_file_frees_blob_and_link_only(served: Served) -> None:
    result = DownloadJob(served.pair()).run()
    reg = Registry()
    target_key = f"hf:{TARGET_REPO}/{TARGET_FILE}"
    blob = Path(os.path.realpath(result.target_path))
    removed = reg.remove(target_key)
    assert removed.freed_bytes == len(served.target)
    assert not blob.exists() and not os.path.lexists(result.target_path)
    assert reg.get(target_key) is None and reg.pairs() == []
    assert result.draft_path is not None and result.draft_path.read_bytes() == served.draft  # the draft stays
    hub_cache = Path(os.environ["HF_HOME"]) / "hub"
    assert not (hub_cache / f"models--{TARGET_REPO.replace('/', '--')}").exists()  # empty repo folder pruned
    reg.remove(f"hf:{DRAFT_REPO}/{result.draft_path.name}")
    assert not (hub_cache / f"models--{DRAFT_REPO.replace('/', '--')}").exists()


def test_remove_keeps_a_blob_another_snapshot_entry_uses(served: Served) -> None:
    result = DownloadJob(served.pair()).run()
    link = result.target_path
    assert link is not None
    twin = link.with_name("same-bytes-other-name.gguf")
    os.symlink(os.readlink(link), twin)  # another file of the repo with identical content
    removed = Registry().remove(f"hf:{TARGET_REPO}/{TARGET_FILE}")
    assert removed.freed_bytes == 0 and not os.path.lexists(link)
    assert twin.read_bytes() == served.target


def test_remove_imported_keeps_the_users_file_unless_asked(files: dict[str, Path]) -> None:
    reg = Registry()
    t = reg.import_gguf(files["target"]).file
    assert reg.remove(t.key).freed_bytes == 0 and files["target"].exists()
    t = reg.import_gguf(files["target"]).file
    assert reg.remove(t.key, delete_imported=True).freed_bytes > 0 and not files["target"].exists()
    with pytest.raises(RegistryError, match="No installed model"):
        reg.remove(t.key)


def test_resolve_by_key_path_and_pair_id(served: Served) -> None:
    result = DownloadJob(served.pair()).run()
    reg = Registry()
    assert reg.resolve(str(result.target_path)) == [f"hf:{TARGET_REPO}/{TARGET_FILE}"]
    assert sorted(reg.resolve("tiny-dflash")) == sorted(f.key for f in reg.files())


def test_import_pairs_only_what_the_engine_would_load(files: dict[str, Path], tmp_path: Path) -> None:
    """Same checks as Engine: required DFlash tensors, block size, target layers in range."""
    reg = Registry()
    t = reg.import_gguf(files["target"])
    hollow = tmp_path / "hollow.gguf"
    make_draft(hollow, with_tensors=False, pad_bytes=64)  # header only, no fc / hidden-norm tensors
    with pytest.raises(ModelFileError, match="fc.weight"):
        reg.import_gguf(hollow)
    far = tmp_path / "far.gguf"
    make_draft(far, layers=(1, 3, 9), pad_bytes=64)  # the target has 8 layers
    res = reg.import_gguf(far)
    assert res.paired_with == () and "layer(s) 9" in res.not_paired[0][1]
    assert reg.import_gguf(files["draft"]).paired_with == (t.file.key,)
    assert len(reg.pairs()) == 1
