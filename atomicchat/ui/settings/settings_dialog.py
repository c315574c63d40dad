"""Settings: system prompt, sampling, context size, GPU layers (and the device really used),
DFlash on/off and draft length, and the thinking toggle with the reason it is off by default."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from atomicchat.engine.draft_confidence import DEFAULT_P_MIN
from atomicchat.store.settings import DEFAULT_SYSTEM_PROMPT, MAX_P_MIN, AppSettings
from atomicchat.ui.server.server_settings import ServerSettingsGroup

THINKING_REASON = "DFlash drafts are trained for non-thinking output; thinking drops acceptance."


def _hint(text: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName("hint")
    label.setWordWrap(True)
    return label


def _trained_context(info: Any | None) -> int:
    """The loaded target's trained context length from its GGUF header; 0 when unknown."""
    path = getattr(info, "target_path", None) if info is not None else None
    if not path:
        return 0
    try:
        from atomicchat.engine.validate import inspect_target

        return int(inspect_target(path).context_length or 0)
    except Exception:  # noqa: BLE001 - an unreadable header only means no warning
        return 0


class SettingsDialog(QDialog):
    def __init__(
        self, settings: AppSettings, info: Any | None = None, parent: QWidget | None = None, recommended: Any = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setMinimumWidth(520)
        self._base = settings
        col = QVBoxLayout(self)
        self.tabs = QTabWidget()  # three short pages instead of one tall form that clips its hints
        col.addWidget(self.tabs, 1)

        chat = QGroupBox("Replies")  # the tab says "Chat": a group title of its own, not the same word again
        form = QFormLayout(chat)
        self.system_prompt = QPlainTextEdit(settings.system_prompt)
        self.system_prompt.setFixedHeight(80)
        form.addRow("System prompt", self.system_prompt)
        reset = QPushButton("Reset to default")
        reset.clicked.connect(lambda: self.system_prompt.setPlainText(DEFAULT_SYSTEM_PROMPT))
        form.addRow("", reset)
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setValue(settings.temperature)
        self.temperature.setToolTip("0 = always the most likely token (greedy); higher = more varied")
        form.addRow("Temperature", self.temperature)
        self.top_k = QSpinBox()
        self.top_k.setRange(0, 1000)
        self.top_k.setValue(settings.top_k)
        form.addRow("Top-k", self.top_k)
        self.top_p = QDoubleSpinBox()
        self.top_p.setRange(0.0, 1.0)
        self.top_p.setSingleStep(0.05)
        self.top_p.setValue(settings.top_p)
        form.addRow("Top-p", self.top_p)
        self.from_model = QCheckBox("Use the model's recommended sampling")
        self.from_model.setChecked(settings.sampling_from_model)
        form.addRow("", self.from_model)
        self.from_model_hint = _hint(
            f"This model recommends {recommended.describe()} (from {recommended.source})." if recommended is not None
            else "The loaded model recommends no values; the ones above are used."
        )
        form.addRow("", self.from_model_hint)
        self._has_recommended = recommended is not None
        self.from_model.toggled.connect(self._sync_sampling)
        self._sync_sampling()
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(16, 32768)
        self.max_tokens.setSingleStep(256)
        self.max_tokens.setValue(settings.max_tokens)
        form.addRow("Max reply tokens", self.max_tokens)
        self.stop_loops = QCheckBox("Stop a reply that keeps repeating itself")
        self.stop_loops.setChecked(settings.stop_loops)
        self.stop_loops.setToolTip("Small models can fall into a loop, writing one line or paragraph over and over "
                                   "until the reply's token limit. On: the reply ends after four copies in a row "
                                   "(at least 128 tokens of them), and says so.")
        form.addRow("", self.stop_loops)
        self.thinking = QCheckBox("Let the model think before answering")
        self.thinking.setChecked(settings.enable_thinking)
        form.addRow("Thinking", self.thinking)
        self.thinking_hint = _hint(f"Off by default with DFlash: {THINKING_REASON}")
        form.addRow("", self.thinking_hint)
        self.tabs.addTab(chat, "Chat")

        engine = QGroupBox("Engine (changes reload the model, draft confidence aside)")
        form = QFormLayout(engine)
        self.n_ctx = QSpinBox()
        self.n_ctx.setRange(256, 262144)
        self.n_ctx.setSingleStep(1024)
        self.n_ctx.setValue(settings.n_ctx)
        self.n_ctx.setToolTip("Tokens of conversation the model can see; more uses more memory")
        form.addRow("Context size", self.n_ctx)
        self._trained_ctx = _trained_context(info)
        self.ctx_warning = _hint("")
        self.ctx_warning.setObjectName("fitWarn")
        self.ctx_warning.setVisible(False)
        form.addRow("", self.ctx_warning)
        self.n_ctx.valueChanged.connect(self._sync_ctx)
        self._sync_ctx()
        self.gpu_layers = QSpinBox()
        self.gpu_layers.setRange(-1, 999)
        self.gpu_layers.setSpecialValueText("All that fit (-1)")
        self.gpu_layers.setValue(settings.n_gpu_layers)
        self.gpu_layers.setToolTip("-1: as many layers as the GPU takes; 0: CPU only")
        form.addRow("GPU layers", self.gpu_layers)
        device = "no model loaded"
        if info is not None:
            device = f"{info.device} ({info.gpu_layers_used} layers on the GPU)"
            notes = [n for n in (getattr(info, "notes", ()) or ()) if n]
            if notes:
                device += "\n" + "\n".join(notes)
        self.device = _hint(device)
        self.device.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow("Device in use", self.device)
        self.use_draft = QCheckBox("Use the DFlash draft")
        self.use_draft.setChecked(settings.use_draft)
        form.addRow("DFlash", self.use_draft)
        form.addRow("", _hint("Faster replies where the draft fits (the draft length below says how it adapts). "
                              "At temperature 0 the text is exactly what the model alone would write."))
        self.draft_max = QSpinBox()
        self.draft_max.setRange(0, 64)
        block = getattr(info, "block_size", 0) if info is not None else 0
        self.draft_max.setSpecialValueText(f"Adaptive (0-{block - 1})" if block > 1 else "Adaptive")
        self.draft_max.setValue(settings.draft_max)
        self.draft_max.setToolTip(
            "Tokens drafted per step. Adaptive picks the length each step from what drafting and verifying "
            "cost on this machine and how often drafts are accepted, and takes plain steps when no draft pays; "
            "a number pins the length."
        )
        form.addRow("Draft length", self.draft_max)
        form.addRow("", _hint("Adaptive switches to plain steps where drafts do not pay on this machine; a number pins it."))
        self.draft_p_min = QDoubleSpinBox()
        self.draft_p_min.setRange(0.0, MAX_P_MIN)
        self.draft_p_min.setSingleStep(0.05)
        self.draft_p_min.setDecimals(2)
        self.draft_p_min.setSpecialValueText("Off")
        self.draft_p_min.setValue(settings.draft_p_min)
        self.draft_p_min.setToolTip(
            "A drafted block stops at its first token the draft gives less than this probability, so the model "
            "does not spend time checking guesses that are likely wrong. The text is the same either way."
        )
        form.addRow("Draft confidence", self.draft_p_min)
        form.addRow("", _hint(f"Default {DEFAULT_P_MIN:.2f}; Off checks every drafted token. Applies from the next reply."))
        self.tabs.addTab(engine, "Engine")
        self.server = ServerSettingsGroup(settings)
        self.tabs.addTab(self.server, "Local server")
        self.use_draft.toggled.connect(self._sync)
        self.thinking.toggled.connect(self._sync)
        self._sync()

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        col.addWidget(buttons)

    def _sync_sampling(self) -> None:
        """The fields are the user's own values: used when the model recommends none or this is off."""
        own = not (self.from_model.isChecked() and self._has_recommended)
        for w in (self.temperature, self.top_k, self.top_p):
            w.setEnabled(own)

    def _sync_ctx(self) -> None:
        """Say it next to the value: above the trained length the model has never seen such positions."""
        trained = self._trained_ctx
        over = bool(trained) and self.n_ctx.value() > trained
        self.ctx_warning.setText(
            f"Above this model's trained context of {trained:,} tokens: replies may lose track or ramble "
            "past that point." if over else ""
        )
        self.ctx_warning.setVisible(over)

    def _sync(self) -> None:
        self.draft_max.setEnabled(self.use_draft.isChecked())
        self.draft_p_min.setEnabled(self.use_draft.isChecked())
        warn = self.use_draft.isChecked() and self.thinking.isChecked()
        self.thinking_hint.setText(
            ("Thinking is on while DFlash is on: " if warn else "Off by default with DFlash: ") + THINKING_REASON
        )
        self.thinking_hint.setStyleSheet("color: #9a6700;" if warn else "")

    def result_settings(self) -> AppSettings:
        return replace(
            self.server.apply_to(self._base),
            system_prompt=self.system_prompt.toPlainText().strip(),
            temperature=round(self.temperature.value(), 3),
            top_k=self.top_k.value(),
            top_p=round(self.top_p.value(), 3),
            max_tokens=self.max_tokens.value(),
            enable_thinking=self.thinking.isChecked(),
            stop_loops=self.stop_loops.isChecked(),
            sampling_from_model=self.from_model.isChecked(),
            n_ctx=self.n_ctx.value(),
            n_gpu_layers=self.gpu_layers.value(),
            use_draft=self.use_draft.isChecked(),
            draft_max=self.draft_max.value(),
            draft_p_min=round(self.draft_p_min.value(), 2),
        ).clamped()
