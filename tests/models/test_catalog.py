"""The pinned catalog, its format rules, and the Hub refresh (against the local fake Hub)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from atomicchat.models import catalog
from atomicchat.models.errors import CatalogError, OfflineError
from tests.models.conftest import TARGET_FILE, TARGET_REPO, Served, catalog_dict


def test_bundled_catalog_has_qwen_dflash_first() -> None:
    cat = catalog.load_catalog()
    pair = cat.pairs[0]
    assert pair.id == "qwen3.5-9b-dflash"
    target, draft = pair.files()
    assert (target.quant, target.size) == ("Q4_K_M", 6_169_341_984)
    assert draft.quant == "Q8_0" and draft.size == 1_383_768_224
    assert draft.sha256 == "27b9d18e605aea9c50ef506e4b63921e0dc624cc91c63c60617a8295f153d436"
    assert pair.target.facts.kv_layers == 8 and pair.target.facts.n_layer == 32 and pair.target.facts.n_embd == 4096
    assert {q.name for q in pair.draft.quants} >= {"Q8_0", "Q4_K_M", "BF16"}
    assert pair.draft.quant("Q4_K_M").repo == "onion515/Qwen3.5-9B-DFlash-GGUF"


def test_a_speedup_on_a_card_is_said_as_reported() -> None:
    """No figure on screen that this app did not measure passes for its own: a card's speedup names who
    reported it and where (the card once said "about 2-3x faster answers" to CPU-only users)."""
    import re

    for pair in catalog.load_catalog().pairs:
        for figure in re.finditer(r"\d[\d.\-]*\s*[x×]", pair.summary):
            assert "reported" in pair.summary[: figure.start()].lower(), (pair.id, pair.summary)
            assert "GPU" in pair.summary or "CPU" in pair.summary, (pair.id, pair.summary)


def test_more_pairs_need_no_code_change() -> None:
    data = catalog_dict()
    second = copy.deepcopy(data["pairs"][0])
    second["id"], second["name"] = "other-pair", "Other"
    second["target"]["repo"] = "someone/Other-GGUF"
    data["pairs"].append(second)
    cat = catalog.parse(data)
    assert [p.id for p in cat.pairs] == ["tiny-dflash", "other-pair"]
    target, _ = cat.pair("other-pair").files("q8_0")  # quant names are case-insensitive
    assert (target.repo, target.filename, target.key) == (
        "someone/Other-GGUF",
        "Tiny-Q8_0.gguf",
        "hf:someone/Other-GGUF/Tiny-Q8_0.gguf",
    )


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["pairs"][0]["target"].update(quants=[]), "pair 'tiny-dflash' target lists no quants"),
        (lambda d: d.update(schema=99), "format 99"),
        (lambda d: d["pairs"].append(copy.deepcopy(d["pairs"][0])), "two pairs share the same id"),
        (lambda d: d["pairs"][0]["draft"].pop("repo"), "needs 'repo'"),
        (lambda d: d["pairs"][0]["target"]["facts"].pop("kv_layers"), "needs 'kv_layers'"),
    ],
)
def test_damaged_catalog_names_the_problem(mutate, message: str) -> None:
    data = catalog_dict()
    mutate(data)
    with pytest.raises(CatalogError, match=message):
        catalog.parse(data)


def test_unknown_pair_and_quant_list_the_choices() -> None:
    cat = catalog.parse(catalog_dict())
    with pytest.raises(CatalogError, match="Known pairs: tiny-dflash"):
        cat.pair("nope")
    with pytest.raises(CatalogError, match="Available: Q4_K_M, Q8_0"):
        cat.pair("tiny-dflash").files("Q2_K")


def test_missing_catalog_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="missing"):
        catalog.load_catalog(tmp_path / "none.json")


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("Qwen_Qwen3.5-9B-Q4_K_M.gguf", "Q4_K_M"),
        ("Qwen3.5-9B-UD-Q4_K_XL.gguf", "UD-Q4_K_XL"),
        ("Qwen3.5-9B-DFlash.Q8_0.gguf", "Q8_0"),
        ("qwen3.5-9b-dflash-bf16.gguf", "BF16"),
        ("model-IQ4_XS.gguf", "IQ4_XS"),
        ("README.md", None),
    ],
)
def test_quant_label(name: str, label: str | None) -> None:
    assert catalog.quant_label(name) == label


def test_refresh_fills_sizes_and_sha_and_discovers_quants(served: Served, tmp_path: Path) -> None:
    served.hub.add_bytes(TARGET_REPO, "Tiny-Q6_K.gguf", b"GGUF" + b"\0" * 100)
    path = tmp_path / "cat.json"
    path.write_text(json.dumps(catalog_dict()))  # no sizes, no sha256
    before = catalog.load_catalog(path)
    assert before.pair("tiny-dflash").files()[0].sha256 is None

    refreshed = catalog.refresh(before)
    t, d = refreshed.pair("tiny-dflash").files()
    served_t = served.hub.file(TARGET_REPO, TARGET_FILE)
    assert (t.size, t.sha256) == (served_t.size, served_t.sha256)
    assert d.sha256 == served.hub.file(d.repo, d.filename).sha256
    assert "Q6_K" in {q.name for q in refreshed.pair("tiny-dflash").target.quants}
    assert any(r.path == f"/api/models/{TARGET_REPO}/revision/main" for r in served.hub.log)

    # the overlay is saved and applied on the next (offline) load of the same catalog
    again = catalog.load_catalog(path)
    assert again.pair("tiny-dflash").files()[0].sha256 == served_t.sha256
    assert catalog.load_catalog(path, use_overlay=False).pair("tiny-dflash").files()[0].sha256 is None


def test_refresh_offline_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OfflineError, match="offline mode"):
        catalog.refresh(catalog.parse(catalog_dict()))
