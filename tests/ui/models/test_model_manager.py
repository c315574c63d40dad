"""Model manager: catalog with fit numbers, download progress/cancel/resume, import and pairing reasons,
first run with nothing installed, and the DFlash demo toy as the fallback when SmolLM2 is not installed."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from tests.gguf_factory import DraftSpec, TargetSpec, write_draft
from tests.ui.conftest import WAIT_MS
from tests.ui.fake_models import FakeModels


@pytest.fixture(autouse=True)
def _own_hf_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))


def _manager(qtbot, w):
    w.open_model_manager()
    m = w._manager
    qtbot.waitUntil(lambda: m.hardware_label.text().startswith("This computer:"), timeout=WAIT_MS)
    return m


def test_first_run_without_models_opens_the_manager(make_window, qtbot):
    w = make_window(models=FakeModels())
    w.load_model()
    qtbot.waitUntil(lambda: w._manager is not None and w._manager.isVisible(), timeout=WAIT_MS)
    assert "No model is installed" in w.notice.label.text()
    assert "No model installed yet" in w.view.empty.text()
    assert not w.composer.button.isEnabled()
    m = _manager(qtbot, w)
    assert "No model is installed yet" in m.notice.label.text()
    assert "Nothing installed yet" in m.installed_hint.text()


def test_catalog_shows_quants_sizes_and_fit_with_numbers(make_window, qtbot):
    w = make_window(models=FakeModels())
    m = _manager(qtbot, w)
    assert m._cards, "the bundled catalog has at least one pair"
    card = next(iter(m._cards.values()))
    assert card.quant.count() >= 2 and card.draft_quant.count() >= 1
    assert "GiB" in card.size.text() and "target" in card.size.text()
    assert "GiB" in card.fit.text() and "needs" in card.fit.text()
    assert "KV cache" in card.fit.toolTip()
    before = card.fit.text()
    card.quant.setCurrentIndex(card.quant.count() - 1)
    assert card.fit.text() != before  # a bigger quant needs more memory


def test_download_shows_progress_cancel_then_resume_and_use(make_window, qtbot, llama_pair):
    models = FakeModels(files=(llama_pair.target, llama_pair.draft))
    models.step_delay = 0.03
    w = make_window(models=models)
    m = _manager(qtbot, w)
    card = next(iter(m._cards.values()))
    card.download.click()
    qtbot.waitUntil(lambda: "MB/s" in card.state.text(), timeout=WAIT_MS)
    assert card.progress.isVisible() and card.cancel.isVisible() and not card.quant.isEnabled()
    assert " of " in card.state.text() and "left" in card.state.text()
    card.cancel.click()
    qtbot.waitUntil(lambda: card.download.isVisible(), timeout=WAIT_MS)
    assert card.download.text() == "Resume" and "Paused" in card.state.text()
    models.step_delay = 0.0
    card.download.click()
    qtbot.waitUntil(lambda: card.use.isVisible(), timeout=WAIT_MS)
    assert models.runs == 2
    assert "installed" in m.notice.label.text()
    assert any(r.target == llama_pair.target for r in m._rows)
    card.use.click()
    qtbot.waitUntil(lambda: w.ready is not None, timeout=WAIT_MS)
    assert w.ready.request.target_path == llama_pair.target and w.ready.request.draft_path == llama_pair.draft
    assert w.store.settings.load().target_path == str(llama_pair.target)
    qtbot.waitUntil(lambda: card.use.text() == "In use", timeout=WAIT_MS)


def test_import_pairs_a_matching_draft_and_explains_a_mismatch(make_window, qtbot, llama_pair, tmp_path):
    w = make_window(models=FakeModels())
    m = _manager(qtbot, w)
    m.import_file(llama_pair.target)
    qtbot.waitUntil(lambda: "Imported" in m.notice.label.text(), timeout=WAIT_MS)
    m.import_file(llama_pair.draft)
    qtbot.waitUntil(lambda: "as a draft" in m.notice.label.text(), timeout=WAIT_MS)
    assert "pairs with 1" in m.notice.label.text()
    assert m.installed_hint.text().startswith("1 model, 1 draft installed")
    (row,) = m._rows
    assert "pairs ✓" in row.draft.currentText()
    bad = write_draft(tmp_path / "wrong-width-draft.gguf", TargetSpec(), DraftSpec(n_embd=32))
    m.import_file(bad)
    qtbot.waitUntil(lambda: "Imported wrong-width-draft" in m.notice.label.text(), timeout=WAIT_MS)
    assert m.notice.kind == "warning" and "Not paired" in m.notice.label.text() and "width" in m.notice.label.text()
    (row,) = m._rows
    i = row.draft.findData(str(bad.resolve()))
    assert "does not pair" in row.draft.itemText(i) and "not checked" not in row.draft.itemText(i)
    assert m.installed_hint.text().startswith("1 model, 2 drafts installed")
    row.draft.setCurrentIndex(i)
    qtbot.waitUntil(lambda: "cannot pair" in row.reason.text(), timeout=WAIT_MS)
    assert "width 32" in row.reason.text() and not row.use.isEnabled()


def test_importing_something_broken_is_a_readable_error(make_window, qtbot, tmp_path):
    w = make_window(models=FakeModels())
    m = _manager(qtbot, w)
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a model at all" * 10)
    m.import_file(junk)
    qtbot.waitUntil(lambda: m.notice.kind == "error", timeout=WAIT_MS)
    assert "junk.gguf was not imported" in m.notice.label.text()
    assert m.import_button.isEnabled()


def test_bundled_demo_is_used_by_default_and_says_so(make_window, qtbot, llama_pair):
    models = FakeModels(demo=(llama_pair.target, llama_pair.draft))
    w = make_window(models=models)
    w.load_model()
    qtbot.waitUntil(lambda: w.ready is not None, timeout=WAIT_MS)
    assert w.choice.source == "demo"
    assert "9M DFlash demo toy" in w.notice.label.text() and "not installed" in w.notice.label.text()
    assert w.composer.button.isEnabled() is False  # nothing typed yet
    w.composer.set_text("hi")
    assert w.composer.button.isEnabled()
    QApplication.processEvents()


def test_installed_rows_show_last_use_open_folder_and_missing_files(make_window, qtbot, tmp_path, monkeypatch):
    from PySide6.QtGui import QDesktopServices

    from atomicchat.models.registry import Registry
    from tests.gguf_factory import write_target

    (tmp_path / "keep").mkdir()
    (tmp_path / "gone").mkdir()
    keep = write_target(tmp_path / "keep" / "kept.gguf", TargetSpec())
    gone = write_target(tmp_path / "gone" / "gone.gguf", TargetSpec())
    reg = Registry()
    reg.import_gguf(keep)
    reg.import_gguf(gone)
    reg.mark_used(keep)
    gone.unlink()  # deleted outside the app
    w = make_window()
    m = _manager(qtbot, w)
    rows = {r.target.name: r for r in m._rows}
    assert "last used" in rows["kept.gguf"].info.text() and "on disk" in rows["kept.gguf"].info.text()
    assert rows["gone.gguf"].info.text().startswith("Missing: gone.gguf is no longer at")
    assert rows["gone.gguf"].info.objectName() == "hint" and not rows["gone.gguf"].use.isEnabled()
    opened = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    rows["kept.gguf"].open_folder.click()
    assert opened == [str(keep.parent)]
