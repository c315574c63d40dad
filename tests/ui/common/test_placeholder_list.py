"""PlaceholderList: the placeholder is painted while the list is empty and never over items."""

from __future__ import annotations

from PySide6.QtGui import QImage


def _shot(widget) -> QImage:  # noqa: ANN001
    widget.viewport().repaint()
    return widget.grab().toImage()


def test_the_placeholder_shows_only_while_the_list_is_empty(qtbot):
    from atomicchat.ui.common.placeholder_list import PlaceholderList

    said, blank = PlaceholderList("Search results appear here."), PlaceholderList("")
    for w in (said, blank):
        qtbot.addWidget(w)
        w.resize(300, 160)
        w.show()
    qtbot.waitExposed(said)
    assert said.placeholderText() == "Search results appear here."
    assert _shot(said) != _shot(blank)  # drawn in the empty list
    said.setPlaceholderText("")
    assert _shot(said) == _shot(blank)  # and gone with its text
    said.setPlaceholderText("No results to show.")
    for w in (said, blank):
        w.addItem("test-org/Tiny-Chat-GGUF")
    assert _shot(said) == _shot(blank)  # never over items
    said.clear()
    blank.clear()
    assert _shot(said) != _shot(blank)  # back when the list empties again
