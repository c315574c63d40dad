"""ElidedLabel gives up width with "…" and says the whole text in its tooltip."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from atomicchat.ui.common.elided_label import ElidedLabel

TEXT = "stopped at the reply length limit"


def test_narrow_shows_an_ellipsis_and_the_tooltip_has_the_whole_text(qtbot):
    label = ElidedLabel(TEXT)
    qtbot.addWidget(label)
    label.setStyleSheet("padding: 1px 6px;")
    label.show()
    assert label.minimumSizeHint().width() < label.sizeHint().width()
    label.resize(label.minimumSizeHint().width() + 10, label.height())
    shown = QLabel.text(label)
    assert shown.endswith("…") and TEXT.startswith(shown[:-1]) and label.text() == TEXT
    assert label.toolTip() == TEXT
    label.resize(label.sizeHint().width() + 5, label.height())
    assert QLabel.text(label) == TEXT and label.toolTip() == ""
    label.setToolTip("Why it stopped, in more words.")  # a tooltip of its own is kept, cut or not
    label.resize(40, label.height())
    assert label.toolTip() == "Why it stopped, in more words."
    label.setText("done")
    label.resize(label.sizeHint())
    assert QLabel.text(label) == "done"
