"""Settings dialog: values round-trip, the device in use is shown, and the thinking reason is there."""

from __future__ import annotations

from atomicchat.store.settings import AppSettings
from atomicchat.ui.settings.settings_dialog import THINKING_REASON, SettingsDialog
from tests.ui.conftest import WAIT_MS
from tests.ui.fake_engine import Script


def test_dialog_round_trips_and_explains_thinking(qtbot):
    d = SettingsDialog(AppSettings())
    qtbot.addWidget(d)
    assert not d.thinking.isChecked() and THINKING_REASON in d.thinking_hint.text()
    assert d.device.text() == "no model loaded"
    d.system_prompt.setPlainText("Be brief.")
    d.temperature.setValue(0.7)
    d.top_k.setValue(20)
    d.n_ctx.setValue(8192)
    d.gpu_layers.setValue(0)
    assert d.draft_p_min.isEnabled() and d.draft_p_min.value() == 0.4  # the engine's default cut
    d.draft_p_min.setValue(0.55)
    d.use_draft.setChecked(False)
    assert not d.draft_max.isEnabled() and not d.draft_p_min.isEnabled()
    d.thinking.setChecked(True)
    assert d.stop_loops.isChecked()  # on by default: a looping reply ends and says so
    d.stop_loops.setChecked(False)
    out = d.result_settings()
    assert out.stop_loops is False and out.gen_params(use_draft=True, temperature=0, top_k=1, top_p=1,
                                                      min_p=0).stop_loops is False
    assert (out.system_prompt, out.temperature, out.top_k, out.n_ctx, out.n_gpu_layers) == (
        "Be brief.",
        0.7,
        20,
        8192,
        0,
    )
    assert out.use_draft is False and out.enable_thinking is True and out.draft_p_min == 0.55


def test_thinking_with_dflash_warns(qtbot):
    d = SettingsDialog(AppSettings(use_draft=True))
    qtbot.addWidget(d)
    d.thinking.setChecked(True)
    assert d.thinking_hint.text().startswith("Thinking is on while DFlash is on")


def test_applying_engine_settings_reloads_and_shows_device(make_window, qtbot, tmp_path):
    t = tmp_path / "t.gguf"
    t.write_bytes(b"x")
    script = Script(texts=["ok"])
    w = make_window(t, None, script)
    d = SettingsDialog(w.settings, w.ready.info)
    qtbot.addWidget(d)
    assert d.device.text().startswith("CPU (0 layers on the GPU)")
    d.n_ctx.setValue(2048)
    first = w.ready
    w.apply_settings(d.result_settings())
    qtbot.waitUntil(lambda: w.ready is not first and w.ready is not None, timeout=WAIT_MS)
    assert w.ready.request.n_ctx == 2048 and w.store.settings.load().n_ctx == 2048
    d2 = SettingsDialog(w.settings, w.ready.info)
    qtbot.addWidget(d2)
    d2.thinking.setChecked(True)
    w.apply_settings(d2.result_settings())
    w.composer.set_text("think")
    w.composer.button.click()
    qtbot.waitUntil(lambda: not w.session.busy and bool(script.calls), timeout=WAIT_MS)
    assert script.calls[-1]["enable_thinking"] is True


def test_context_above_the_trained_length_is_said_next_to_the_value(qtbot, tmp_path):
    from types import SimpleNamespace

    from tests.gguf_factory import TargetSpec, write_target

    target = write_target(tmp_path / "t.gguf", TargetSpec(n_ctx=2048))
    info = SimpleNamespace(target_path=target, device="CPU", gpu_layers_used=0, notes=(), block_size=8)
    d = SettingsDialog(AppSettings(n_ctx=2048), info)
    qtbot.addWidget(d)
    d.show()
    d.tabs.setCurrentIndex(1)  # the Engine page, where the context size is set
    assert not d.ctx_warning.isVisible()
    d.n_ctx.setValue(8192)
    assert d.ctx_warning.isVisible() and "trained context of 2,048 tokens" in d.ctx_warning.text()
    d.n_ctx.setValue(1024)
    assert not d.ctx_warning.isVisible()
