"""Model manager ▸ Search the Hub against the loopback fake Hub: search, pick a repo, a fit read from
the remote header, one-click download into the registry, and offline browsing from the cache."""

from __future__ import annotations

import pytest

from tests.models.fakehub import FakeHub
from tests.models.ggufs import make_target
from tests.ui.conftest import WAIT_MS
from tests.ui.fake_models import FakeModels

REPO = "test-org/Tiny-Chat-GGUF"


@pytest.fixture
def hub(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    fake = FakeHub().start()
    monkeypatch.setenv("HF_ENDPOINT", fake.url)
    monkeypatch.setattr(constants, "ENDPOINT", fake.url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", fake.url + "/{repo_id}/resolve/{revision}/{filename}")
    data = make_target(tmp_path / "t.gguf", pad_bytes=1 << 20)
    fake.add_bytes(REPO, "Tiny-Chat-Q4_K_M.gguf", data)
    fake.add_bytes(REPO, "mmproj-F16.gguf", b"GGUF")
    fake.repo(REPO).downloads, fake.repo(REPO).license = 42, "apache-2.0"
    fake.add_bytes("test-org/Tiny-Other-GGUF", "Other-Q8_0.gguf", data)
    yield fake
    fake.stop()


def test_search_pick_fit_download_and_offline(make_window, qtbot, hub, monkeypatch):
    from atomicchat.models.registry import Registry

    w = make_window(models=FakeModels())
    w.open_model_manager()
    m = w._manager
    panel = m.hub_panel
    m.tabs.setCurrentWidget(panel)
    panel.query.setText("tiny")
    panel.search_button.click()
    qtbot.waitUntil(lambda: panel.results.count() == 2, timeout=WAIT_MS)
    assert "42 downloads" in panel.results.item(0).text() and "apache-2.0" in panel.results.item(0).text()
    panel.results.setCurrentRow(0)
    qtbot.waitUntil(lambda: panel.detail.isVisible() and panel.quant.count() == 1, timeout=WAIT_MS)
    assert panel.quant.itemText(0).startswith("Q4_K_M · ")
    qtbot.waitUntil(lambda: "needs" in panel.fit.text(), timeout=WAIT_MS)  # from the remote header
    assert any(r.range and r.range.startswith("bytes=0-") for r in hub.gets("Tiny-Chat-Q4_K_M.gguf"))
    assert "No DFlash draft is known" in panel.draft_text.text() and not panel.with_draft.isVisible()

    panel.download_button.click()
    qtbot.waitUntil(lambda: "Downloaded and installed" in panel.progress_label.text(), timeout=WAIT_MS)
    assert any(f.filename == "Tiny-Chat-Q4_K_M.gguf" for f in Registry().files())
    assert "is installed" in m.notice.label.text()

    from atomicchat import paths
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    panel.search_button.click()
    qtbot.waitUntil(lambda: "Showing results saved" in panel.status.text(), timeout=WAIT_MS)
    assert panel.results.count() == 2
    panel.results.setCurrentRow(1)  # never listed before: its files are not in the cache
    qtbot.waitUntil(lambda: "not saved on this computer" in panel.fit.text(), timeout=WAIT_MS)
    assert not panel.download_button.isEnabled()


def test_search_errors_are_sentences(make_window, qtbot, hub):
    w = make_window(models=FakeModels())
    w.open_model_manager()
    panel = w._manager.hub_panel
    from atomicchat.ui.models.hub_search_panel import BEFORE_SEARCH, NOTHING_FOUND

    assert panel.results.placeholderText() == BEFORE_SEARCH  # the empty list says what goes in it
    panel.query.setText("nobody/Nothing-GGUF")
    panel.search_button.click()
    qtbot.waitUntil(lambda: "was not found on the Hub" in panel.status.text(), timeout=WAIT_MS)
    assert panel.search_button.isEnabled() and panel.results.count() == 0
    assert panel.results.placeholderText() == NOTHING_FOUND


def test_one_click_downloads_a_target_and_its_known_dflash_draft(make_window, qtbot, hub, tmp_path, monkeypatch):
    import hashlib

    from atomicchat.models import drafts
    from atomicchat.models.registry import Registry
    from tests.models.ggufs import make_draft

    draft = make_draft(tmp_path / "d.gguf")
    hub.add_bytes("test-org/Tiny-DFlash-GGUF", "Tiny-Chat-DFlash.Q8_0.gguf", draft)
    known = drafts.KnownDraft(
        target="Tiny-Chat", match="tiny-chat", base_repo="test-org/Tiny-Chat", source="test-org/Tiny-Chat-DFlash",
        block_size=16, facts_from="test",
        gguf=(drafts.DraftFile("test-org/Tiny-DFlash-GGUF", "Tiny-Chat-DFlash.Q8_0.gguf", "Q8_0", len(draft),
                               hashlib.sha256(draft).hexdigest(), "dflash", True),),
    )
    monkeypatch.setattr(drafts, "known_drafts", lambda: (known,))
    w = make_window(models=FakeModels())
    w.open_model_manager()
    panel = w._manager.hub_panel
    panel.query.setText(REPO)
    panel.search_button.click()
    w._manager.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.detail.isVisible() and panel.quant.count() == 1, timeout=WAIT_MS)
    assert panel.with_draft.isVisible() and panel.with_draft.isChecked()
    assert "With DFlash draft test-org/Tiny-DFlash-GGUF/Tiny-Chat-DFlash.Q8_0.gguf" in panel.draft_text.text()
    qtbot.waitUntil(lambda: "needs" in panel.fit.text(), timeout=WAIT_MS)
    assert "draft" in panel.fit.text()  # the draft's weights and KV are in the sum
    panel.download_button.click()
    qtbot.waitUntil(lambda: "Downloaded and installed" in panel.progress_label.text(), timeout=WAIT_MS)
    reg = Registry()
    names = {f.filename for f in reg.files()}
    assert {"Tiny-Chat-Q4_K_M.gguf", "Tiny-Chat-DFlash.Q8_0.gguf"} <= names
    assert any(p.draft.filename == "Tiny-Chat-DFlash.Q8_0.gguf" for p in reg.pairs())  # checked and paired
    assert "with its DFlash draft" in w._manager.notice.label.text()
