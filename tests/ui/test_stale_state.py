"""Nothing on screen outlives its reason: the composer placeholder, the demo banner, disabled actions."""

from __future__ import annotations

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QToolButton

from atomicchat.ui.common import theme
from atomicchat.ui.chat.composer import PLACEHOLDER
from atomicchat.models.service import ModelChoice
from tests.ui.conftest import WAIT_MS, send
from tests.ui.fake_engine import Script

DEMO_NOTE = "Using the bundled demo model (demo-target.F32.gguf). It is tiny and only for trying the app."


def _files(tmp_path, *names):
    out = []
    for n in names:
        p = tmp_path / n
        p.write_bytes(b"x")
        out.append(p)
    return out


def test_placeholder_changes_and_repaints_when_the_model_is_ready(make_window, qtbot, tmp_path):
    t, d = _files(tmp_path, "t.gguf", "d.gguf")
    w = make_window(script=Script())
    assert w.composer.edit.placeholderText() == "Loading the model…"
    w.load_model(ModelChoice(t, d, "chosen"))
    qtbot.waitUntil(lambda: w.ready is not None, timeout=WAIT_MS)
    assert w.composer.edit.placeholderText() == PLACEHOLDER


def test_demo_banner_goes_when_another_model_loads(make_window, qtbot, tmp_path):
    t, d, t2 = _files(tmp_path, "demo-target.F32.gguf", "demo-dflash.gguf", "other-model.gguf")
    w = make_window(script=Script())
    w.load_model(ModelChoice(t, d, "demo", DEMO_NOTE))
    qtbot.waitUntil(lambda: w.ready is not None, timeout=WAIT_MS)
    assert "bundled demo model" in w.notice.text()
    w.load_model(ModelChoice(t2, None, "chosen"))
    qtbot.waitUntil(lambda: w.ready is not None and w.ready.request.target_path == t2, timeout=WAIT_MS)
    assert w.notice.text() == ""


def test_actions_are_disabled_when_they_cannot_act(make_window, qtbot, tmp_path):
    t, d = _files(tmp_path, "t.gguf", "d.gguf")
    w = make_window(t, d, Script())
    for a in (w.stop_action, w.regen_action, w.rename_action, w.delete_action):
        assert not a.isEnabled(), a.text()  # no chat yet, nothing streaming
    send(qtbot, w, "hello")
    assert not w.stop_action.isEnabled()
    assert w.regen_action.isEnabled() and w.rename_action.isEnabled() and w.delete_action.isEnabled()
    w.new_chat()
    assert not w.rename_action.isEnabled() and not w.delete_action.isEnabled()


def test_disabled_colours_differ_from_enabled_in_both_themes(qapp):
    for mode in ("light", "dark"):
        c = theme.apply_theme(qapp, mode)
        pal = qapp.palette()
        for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
            on = pal.color(QPalette.ColorGroup.Active, role)
            off = pal.color(QPalette.ColorGroup.Disabled, role)
            assert on != off, (mode, role)
        assert off.name() == c.disabled
        # a disabled tool button (the message and stats actions) really paints in the disabled colour
        b = QToolButton()
        b.setText("Regenerate")
        b.setEnabled(False)
        b.ensurePolished()
        assert b.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText).name() == c.disabled
    theme.apply_theme(qapp, "light")


def test_dark_theme_is_dark(qapp):
    c = theme.apply_theme(qapp, "dark")
    assert qapp.palette().color(QPalette.ColorRole.Window).lightness() < 80
    assert "monokai" == c.pygments
    theme.apply_theme(qapp, "light")
    assert qapp.palette().color(QPalette.ColorRole.Window).lightness() > 200


def test_view_and_help_menus_titles_zoom_theme_export(make_window, qtbot, tmp_path, monkeypatch):
    import json

    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication, QFileDialog

    from tests.ui.conftest import send
    from tests.ui.fake_engine import Script

    t = tmp_path / "t.gguf"
    t.write_bytes(b"x")
    w = make_window(t, None, Script(texts=["one reply", "two reply"]))
    send(qtbot, w, "Write a function that reads a file and counts lines")
    w.new_chat()
    send(qtbot, w, "Write a function that reads a file and counts lines")
    titles = [w.sidebar.list.item(i).text() for i in range(w.sidebar.list.count())]
    assert len(set(titles)) == 2 and all(x.startswith("Write a function that reads…") for x in titles)
    size = w.view.font().pointSizeF()
    w.zoom_in_action.trigger()
    w.zoom_in_action.trigger()
    assert w.view.font().pointSizeF() == size + 2 and w.store.settings.load().chat_zoom == 2
    w.zoom_reset_action.trigger()
    assert w.view.font().pointSizeF() == size and w.settings.chat_zoom == 0
    w.theme_actions["dark"].trigger()
    window_colour = QApplication.instance().palette().color(QPalette.ColorRole.Window)
    assert window_colour.lightness() < 80 and w.store.settings.load().theme == "dark"
    w.theme_actions["light"].trigger()
    assert QApplication.instance().palette().color(QPalette.ColorRole.Window).lightness() > 180
    out = tmp_path / "chat.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    w.export_json_action.trigger()
    data = json.loads(out.read_text())
    assert [m["role"] for m in data["messages"]] == ["user", "assistant"] and data["messages"][1]["content"]
    assert any(a.text() == "Keyboard shortcuts" for a in w.menuBar().actions()[-1].menu().actions())
