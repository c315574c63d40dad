"""The live acceptance/speedup indicator under a reply: tok/s, acceptance, τ, speedup and chart.

Shown while a reply streams and kept with it afterwards (its numbers are saved with the message).
The figures sit in a flow layout: a narrow window wraps them onto a second line.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QSizePolicy, QToolButton, QWidget

from atomicchat.stats import TargetSpeed
from atomicchat.store.records import ReplyStats
from atomicchat.ui.common.flow_layout import FlowLayout
from atomicchat.ui.chat.stats_format import format_stats, stats_tooltip
from atomicchat.ui.chat.step_chart import StepChart


class StatsBar(QWidget):
    measure_requested = Signal()
    dflash_off_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statsBar")
        row = FlowLayout(self, spacing=10)  # wraps in a narrow window instead of widening the reply
        row.setContentsMargins(0, 2, 0, 0)
        self.mode = QLabel()
        self.mode.setObjectName("statsMode")
        self.speed = QLabel()
        self.acceptance = QLabel()
        self.tau = QLabel()
        self.speedup = QLabel()
        self.drafting = QLabel()  # what the adaptive draft length did
        for label in (self.mode, self.speed, self.acceptance, self.tau, self.drafting, self.speedup):
            label.setObjectName(label.objectName() or "statsText")
            row.addWidget(label)
        self.measure = QToolButton()
        self.measure.setText("Measure")
        self.measure.setToolTip("Run a short target-only generation once to measure the real speedup")
        self.measure.setAutoRaise(True)
        self.measure.clicked.connect(self.measure_requested)
        row.addWidget(self.measure)
        self.dflash_off = QToolButton()
        self.dflash_off.setText("Turn DFlash off for this model")
        self.dflash_off.setToolTip("DFlash was measured slower than the target alone here; reload without the draft")
        self.dflash_off.setAutoRaise(True)
        self.dflash_off.setVisible(False)
        self.dflash_off.clicked.connect(self.dflash_off_requested)
        row.addWidget(self.dflash_off)
        self.chart = StepChart()
        row.addWidget(self.chart)
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.stats = ReplyStats()

    def set_stats(self, stats: ReplyStats, baseline: TargetSpeed | None, draft_max: int | None = None) -> None:
        self.stats = stats
        t = format_stats(stats, baseline)
        self.mode.setText(t.mode)
        self.speed.setText(t.speed)
        shown = ((self.acceptance, t.acceptance), (self.tau, t.tau), (self.drafting, t.drafting), (self.speedup, t.speedup))
        for label, text in shown:
            label.setText(text)
            label.setVisible(bool(text))
        drafted = stats.used_draft and stats.n_draft_steps > 0  # no drafts: a flat line read as a stray rule
        self.measure.setVisible(drafted and baseline is None)  # no drafts: no speedup to measure
        self.dflash_off.setVisible(t.slower)
        self.chart.setVisible(drafted)
        if drafted:
            self.chart.set_values(stats.step_accepted, draft_max)
        self.setToolTip(stats_tooltip(stats, baseline))

    def set_measuring(self, busy: bool) -> None:
        self.measure.setEnabled(not busy)
        self.measure.setText("Measuring…" if busy else "Measure")
