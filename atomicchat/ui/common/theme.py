"""The app's look: Fusion style, a light or dark palette and one stylesheet, the same on every OS.

The mode is "system" (follow the desktop's colour scheme, Qt 6.5+ `QStyleHints.colorScheme()`, and
change with it), "light" or "dark". Disabled widgets and menu entries get their own, dimmer colours
in both palettes: Qt's `setColor(role, c)` sets every colour group, which would draw a disabled
action exactly like an enabled one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from atomicchat.ui.chat import markdown_render


@dataclass(frozen=True)
class Colours:
    window: str
    panel: str  # sidebar, status bar
    base: str  # text fields
    text: str
    muted: str
    faint: str  # placeholders
    disabled: str
    disabled_bg: str
    border: str
    hover: str
    selected: str
    accent: str
    accent_soft: str
    accent_text: str
    user_bg: str
    good: str
    good_bg: str
    warn: str
    warn_bg: str
    bad: str
    bad_bg: str
    bad_border: str
    info_bg: str
    info_text: str
    warn_notice_text: str
    bad_notice_text: str
    code_bg: str
    inline_code_bg: str
    draft_bg: str
    pygments: str


LIGHT = Colours(
    window="#ffffff", panel="#f6f7f9", base="#ffffff", text="#111827", muted="#4b5563", faint="#9ca3af",
    disabled="#a8adb7", disabled_bg="#e5e7eb", border="#e5e7eb", hover="#eceef2", selected="#e0e7ff",
    accent="#4f46e5", accent_soft="#eef2ff", accent_text="#4338ca", user_bg="#f3f4f6",
    good="#1f6f3a", good_bg="#e6f4ea", warn="#9a6700", warn_bg="#fff8c5", bad="#b42318", bad_bg="#fef3f2",
    bad_border="#fecdca", info_bg="#eff6ff", info_text="#1e3a8a", warn_notice_text="#78350f",
    bad_notice_text="#991b1b", code_bg="#f4f5f7", inline_code_bg="#eef0f3", draft_bg="#d9f2dd", pygments="default",
)
DARK = Colours(
    window="#1b1d22", panel="#22252b", base="#25282f", text="#e6e8ec", muted="#a3a9b4", faint="#6f7682",
    disabled="#5c626c", disabled_bg="#2c3038", border="#343841", hover="#2c3038", selected="#33395a",
    accent="#6366f1", accent_soft="#2a2d4a", accent_text="#a5b4fc", user_bg="#262a31",
    good="#7ee2a0", good_bg="#1d3a28", warn="#f5c451", warn_bg="#3a3118", bad="#ff8a80", bad_bg="#3b1f1f",
    bad_border="#6b2c2c", info_bg="#1c2a44", info_text="#bfdbfe", warn_notice_text="#fde68a",
    bad_notice_text="#fecaca", code_bg="#262a31", inline_code_bg="#2d3139", draft_bg="#1f4d2c", pygments="monokai",
)

STYLESHEET = """
QMainWindow, #chatPane {{ background: {window}; }}
#sidebar {{ background: {panel}; border-right: 1px solid {border}; }}
#newChat {{ padding: 7px 10px; border: 1px solid {border}; border-radius: 6px; background: {base}; text-align: left; }}
#newChat:hover {{ background: {accent_soft}; }}
#chatSearch {{ padding: 5px 8px; border: 1px solid {border}; border-radius: 6px; background: {base}; }}
#chatList {{ border: none; background: transparent; outline: 0; }}
#chatList::item {{ padding: 7px 8px; border-radius: 6px; color: {text}; }}
#chatList::item:selected {{ background: {selected}; color: {text}; }}
#chatList::item:hover:!selected {{ background: {hover}; }}
#sidebarHint {{ color: {muted}; padding: 8px; }}
#messages {{ background: {window}; }}
#userMessage {{ background: {user_bg}; border-radius: 10px; }}
#assistantMessage {{ background: {window}; }}
#roleLabel {{ font-weight: 600; color: {muted}; }}
#statusLabel {{ color: {warn}; background: {warn_bg}; border-radius: 4px; padding: 0 5px; }}
#messageError {{ color: {bad}; background: {bad_bg}; border: 1px solid {bad_border}; border-radius: 6px; padding: 6px 8px; }}
#messageAction {{ color: {muted}; padding: 1px 5px; }}
#messageAction:disabled {{ color: {disabled}; }}
#statsBar QLabel {{ color: {muted}; font-size: 9pt; }}
#statsBar QToolButton {{ color: {accent_text}; border: 1px solid {selected}; border-radius: 4px; padding: 0 6px; font-size: 9pt; }}
#statsBar QToolButton:hover {{ background: {accent_soft}; }}
#statsBar QToolButton:disabled {{ color: {disabled}; border-color: {disabled_bg}; }}
QSplitter::handle {{ background: {border}; }}
QSplitter::handle:horizontal {{ width: 1px; }}
#statsMode {{ color: {good}; background: {good_bg}; border-radius: 4px; padding: 0 5px; }}
#composer {{ background: {window}; border-top: 1px solid {border}; }}
#attachmentChip {{ background: {accent_soft}; border: 1px solid {selected}; border-radius: 6px; }}
#attachmentChip QLabel {{ color: {text}; font-size: 9pt; }}
#chipRemove {{ color: {muted}; padding: 0 2px; }}
#attachButton {{ color: {muted}; padding: 7px 8px; border: 1px solid {border}; border-radius: 8px; }}
#attachButton:hover {{ background: {accent_soft}; }}
#composerEdit {{ border: 1px solid {border}; border-radius: 8px; padding: 4px 6px; background: {base}; }}
#composerEdit:focus {{ border-color: {accent}; }}
#sendButton {{ padding: 7px 14px; border-radius: 8px; background: {accent}; color: white; border: none; font-weight: 600; }}
#sendButton:disabled {{ background: {disabled_bg}; color: {disabled}; }}
#sendButton[text="Stop"] {{ background: #dc2626; }}
QPushButton:disabled, QToolButton:disabled, QCheckBox:disabled, QLabel:disabled {{ color: {disabled}; }}
QMenu::item:disabled {{ color: {disabled}; }}
#notice {{ border-bottom: 1px solid {border}; }}
#notice[kind="info"] {{ background: {info_bg}; color: {info_text}; }}
#notice[kind="warning"] {{ background: {warn_bg}; color: {warn_notice_text}; }}
#notice[kind="error"] {{ background: {bad_bg}; color: {bad_notice_text}; }}
#emptyState {{ color: {muted}; }}
#modelStatus {{ color: {muted}; padding: 0 8px; }}
QStatusBar {{ border-top: 1px solid {border}; background: {panel}; }}
#hint {{ color: {muted}; }}
#fitGood {{ color: {good}; }}
#fitWarn {{ color: {warn}; }}
#fitBad {{ color: {bad}; }}
#cardTitle {{ font-weight: 600; font-size: 11pt; }}
#card {{ border: 1px solid {border}; border-radius: 8px; background: {base}; }}
"""

_current = LIGHT


def current() -> Colours:
    """The colours in use now (widgets that paint or build HTML themselves read them)."""
    return _current


def system_is_dark() -> bool:
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)  # Qt 6.5+
    return scheme is not None and scheme() == Qt.ColorScheme.Dark


def resolve(mode: str) -> Colours:
    if mode == "dark" or (mode not in ("light", "dark") and system_is_dark()):
        return DARK
    return LIGHT


def palette_for(c: Colours) -> QPalette:
    pal = QPalette()
    roles = {
        QPalette.ColorRole.Window: c.window,
        QPalette.ColorRole.Base: c.base,
        QPalette.ColorRole.AlternateBase: c.panel,
        QPalette.ColorRole.Text: c.text,
        QPalette.ColorRole.WindowText: c.text,
        QPalette.ColorRole.Button: c.user_bg,
        QPalette.ColorRole.ButtonText: c.text,
        QPalette.ColorRole.Highlight: c.selected,
        QPalette.ColorRole.HighlightedText: c.text,
        QPalette.ColorRole.Link: c.accent_text,
        QPalette.ColorRole.PlaceholderText: c.faint,
        QPalette.ColorRole.ToolTipBase: c.panel,
        QPalette.ColorRole.ToolTipText: c.text,
    }
    for role, colour in roles.items():
        pal.setColor(role, QColor(colour))  # all groups
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor(c.disabled))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Button, QColor(c.disabled_bg))
    return pal


def apply_theme(app: QApplication, mode: str = "light") -> Colours:
    """Style the whole app for `mode` ("system" | "light" | "dark"); returns the colours chosen."""
    global _current
    c = resolve(mode)
    _current = c
    app.setStyle("Fusion")
    app.setPalette(palette_for(c))
    font = QFont(app.font())
    if font.pointSizeF() < 10:
        font.setPointSizeF(10)
        app.setFont(font)
    app.setStyleSheet(STYLESHEET.format(**asdict(c)))
    markdown_render.set_colours(
        markdown_render.RenderColours(c.code_bg, c.muted, c.inline_code_bg, c.border, c.pygments)
    )
    return c
