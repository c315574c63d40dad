"""Nothing on screen outlives its reason: the composer placeholder, the demo banner, disabled actions."""

from __future__ import annotations

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QToolButton

from atomicchat.ui import theme
from atomicchat.ui.composer import PLACEHOLDER
from atomicchat.ui.model_service import ModelChoice
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
