"""`atomicchat models list|pull|rm|import` end to end, through atomicchat.cli.main."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atomicchat.cli import main
from tests.models.conftest import Served, catalog_dict
from tests.models.ggufs import OTHER_TOKENS, make_draft, make_target


@pytest.fixture
def cat_file(served: Served, tmp_path: Path) -> Path:
    t, d = served.pair().files()
    path = tmp_path / "cat.json"
    path.write_text(json.dumps(catalog_dict(t.sha256, d.sha256, (t.size or 0, d.size or 0))))
    return path


def test_list_shows_bundled_catalog_with_fit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "list", "--ctx", "32768"]) == 0
    out = capsys.readouterr().out
    assert "qwen3.5-9b-dflash" in out and "Q4_K_M" in out and "Hardware: RAM" in out
    assert "KV 1.2 GiB at 32768 tokens" in out
    assert any(v in out for v in ("Fits in VRAM", "Fits in RAM, slower", "Won't fit"))


def test_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    quants = {q["quant"]: q for q in data["quants"]}
    assert quants["Q4_K_M"]["fit"] in ("fits_vram", "fits_ram", "wont_fit")
    assert data["installed"] == [] and data["n_ctx"] == 8192


def test_pull_reports_progress_on_stderr_then_rm(cat_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "pull", "tiny-dflash", "--catalog", str(cat_file)]) == 0
    captured = capsys.readouterr()
    assert "downloading Tiny-Q4_K_M.gguf" in captured.err and "done:" in captured.err
    assert "Ready: Tiny + DFlash (Q4_K_M)." in captured.out and "target:" in captured.out

    assert main(["models", "list", "--catalog", str(cat_file)]) == 0
    assert "ready: " in capsys.readouterr().out

    assert main(["models", "rm", "tiny-dflash"]) == 0
    out = capsys.readouterr().out
    assert out.count("removed hf:") == 2 and "Freed 4.0 MiB." in out


def test_pull_unknown_pair_is_one_line(cat_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "pull", "nope", "--catalog", str(cat_file)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == "error: The catalog has no model pair 'nope'. Known pairs: tiny-dflash."


def test_import_pairs_and_explains_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_target(tmp_path / "t.gguf", pad_bytes=64)
    make_draft(tmp_path / "d.gguf", pad_bytes=64)
    make_draft(tmp_path / "x.gguf", tokens=OTHER_TOKENS, pad_bytes=64)
    assert main(["models", "import", str(tmp_path / "t.gguf")]) == 0
    assert main(["models", "import", str(tmp_path / "d.gguf")]) == 0
    assert "paired with local:" in capsys.readouterr().out
    target_key = f"local:{(tmp_path / 't.gguf').resolve()}"
    assert main(["models", "import", str(tmp_path / "x.gguf"), "--pair-with", target_key]) == 1
    assert "not paired with" in capsys.readouterr().out


def test_import_missing_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "import", str(tmp_path / "none.gguf")]) == 1
    assert capsys.readouterr().err.startswith("error: Model file not found")


def test_rm_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "rm", "nothing"]) == 1
    assert "No installed model matches 'nothing'" in capsys.readouterr().err
