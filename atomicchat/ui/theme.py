"""The app's look: Fusion style, a light palette and one stylesheet, so it is the same on every OS."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

STYLESHEET = """
QMainWindow, #chatPane { background: #ffffff; }
#sidebar { background: #f6f7f9; border-right: 1px solid #e5e7eb; }
#newChat { padding: 7px 10px; border: 1px solid #d1d5db; border-radius: 6px; background: #ffffff; text-align: left; }
#newChat:hover { background: #eef2ff; }
#chatSearch { padding: 5px 8px; border: 1px solid #d1d5db; border-radius: 6px; background: #ffffff; }
#chatList { border: none; background: transparent; outline: 0; }
#chatList::item { padding: 7px 8px; border-radius: 6px; color: #111827; }
#chatList::item:selected { background: #e0e7ff; color: #111827; }
#chatList::item:hover:!selected { background: #eceef2; }
#sidebarHint { color: #6b7280; padding: 8px; }
#messages { background: #ffffff; }
#userMessage { background: #f3f4f6; border-radius: 10px; }
#assistantMessage { background: #ffffff; }
#roleLabel { font-weight: 600; color: #374151; }
#statusLabel { color: #9a6700; background: #fff8c5; border-radius: 4px; padding: 0 5px; }
#messageError { color: #b42318; background: #fef3f2; border: 1px solid #fecdca; border-radius: 6px; padding: 6px 8px; }
#messageAction { color: #4b5563; padding: 1px 5px; }
#statsBar QLabel { color: #4b5563; font-size: 9pt; }
#statsBar QToolButton { color: #4338ca; border: 1px solid #c7d2fe; border-radius: 4px; padding: 0 6px; font-size: 9pt; }
#statsBar QToolButton:hover { background: #eef2ff; }
QSplitter::handle { background: #e5e7eb; }
QSplitter::handle:horizontal { width: 1px; }
#statsMode { color: #1f6f3a; background: #e6f4ea; border-radius: 4px; padding: 0 5px; }
#composer { background: #ffffff; border-top: 1px solid #e5e7eb; }
#composerEdit { border: 1px solid #d1d5db; border-radius: 8px; padding: 4px 6px; background: #ffffff; }
#composerEdit:focus { border-color: #6366f1; }
#sendButton { padding: 7px 14px; border-radius: 8px; background: #4f46e5; color: white; border: none; font-weight: 600; }
#sendButton:disabled { background: #c7c9d9; }
#sendButton[text="Stop"] { background: #dc2626; }
#notice { border-bottom: 1px solid #e5e7eb; }
#notice[kind="info"] { background: #eff6ff; color: #1e3a8a; }
#notice[kind="warning"] { background: #fffbeb; color: #78350f; }
#notice[kind="error"] { background: #fef2f2; color: #991b1b; }
#emptyState { color: #6b7280; }
#modelStatus { color: #374151; padding: 0 8px; }
QStatusBar { border-top: 1px solid #e5e7eb; background: #f9fafb; }
#hint { color: #6b7280; }
#fitGood { color: #1f6f3a; }
#fitWarn { color: #9a6700; }
#fitBad { color: #b42318; }
#cardTitle { font-weight: 600; font-size: 11pt; }
#card { border: 1px solid #e5e7eb; border-radius: 8px; background: #ffffff; }
"""


def apply_theme(app: QApplication) -> None:
    app.setStyle("Fusion")
    pal = app.palette()
    pal.setColor(QPalette.ColorRole.Window, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.AlternateBase, QColor("#f6f7f9"))
    pal.setColor(QPalette.ColorRole.Text, QColor("#111827"))
    pal.setColor(QPalette.ColorRole.WindowText, QColor("#111827"))
    pal.setColor(QPalette.ColorRole.Button, QColor("#f3f4f6"))
    pal.setColor(QPalette.ColorRole.ButtonText, QColor("#111827"))
    pal.setColor(QPalette.ColorRole.Highlight, QColor("#c7d2fe"))
    pal.setColor(QPalette.ColorRole.HighlightedText, QColor("#111827"))
    pal.setColor(QPalette.ColorRole.Link, QColor("#4338ca"))
    pal.setColor(QPalette.ColorRole.PlaceholderText, QColor("#9ca3af"))
    app.setPalette(pal)
    font = QFont(app.font())
    if font.pointSizeF() < 10:
        font.setPointSizeF(10)
        app.setFont(font)
    app.setStyleSheet(STYLESHEET)
