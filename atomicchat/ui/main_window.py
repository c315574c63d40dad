"""The main window: chat list on the left; notices, the chat and the composer on the right.

It wires widgets to the ChatSession and the engine host, picks the model to load at start-up
(the user's pick, an installed pair, else the bundled demo; with none it opens the model manager),
and turns every failure into a readable notice. It never blocks on the engine.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QLabel, QMainWindow, QProgressBar, QSplitter, QVBoxLayout, QWidget

from atomicchat import APP_NAME
from atomicchat.store import Store
from atomicchat.store.settings import AppSettings
from atomicchat.ui.server.api_server import ApiServerController
from atomicchat.ui.chat.chat_session import ChatSession
from atomicchat.ui.chat.chat_view import EMPTY_HINT, ChatView
from atomicchat.ui.chat.composer import Composer
from atomicchat.ui.chat.markdown_render import warm_up
from atomicchat.models.service import ModelChoice, ModelService
from atomicchat.ui.common.elided_label import ElidedLabel
from atomicchat.ui.common.notice_bar import NoticeBar
from atomicchat.ui.chat.sidebar import ChatSidebar
from atomicchat.ui.engine.host import EngineHost
from atomicchat.ui.engine.worker_types import ModelReady, WorkerFailure

if TYPE_CHECKING:
    from atomicchat.ui.models.model_manager import ModelManager

UNDO_MS = 10000
NARROW_PX = 640  # below this window width the chat list hides itself (Ctrl+B brings it back)
LOAD_KEYS = ("n_ctx", "n_gpu_layers", "draft_max", "use_draft", "target_path", "draft_path", "draft_off_for")  # need a reload


class MainWindow(QMainWindow):
    def __init__(
        self, store: Store, host: EngineHost, models: ModelService | None = None, auto_load: bool = True
    ) -> None:
        super().__init__()
        self.store = store
        self.host = host
        self.models = models or ModelService()
        self.settings: AppSettings = store.settings.load()
        self.choice: ModelChoice | None = None
        self.ready: ModelReady | None = None
        self._manager: ModelManager | None = None
        self._load_notice = False  # the notice bar shows something about the model (problem or note)
        self._closing = False
        self.setWindowTitle(APP_NAME)
        self.resize(1100, 760)

        self.sidebar = ChatSidebar()
        self.notice = NoticeBar()
        self.undo_bar = NoticeBar()
        self.view = ChatView()
        self.composer = Composer()
        pane = QWidget()
        pane.setObjectName("chatPane")
        col = QVBoxLayout(pane)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(0)
        col.addWidget(self.notice)
        col.addWidget(self.undo_bar)
        col.addWidget(self.view, 1)
        col.addWidget(self.composer)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.sidebar)
        split.addWidget(pane)
        split.setStretchFactor(1, 1)
        split.setSizes([250, 850])
        split.setChildrenCollapsible(False)
        split.setHandleWidth(1)
        self.setCentralWidget(split)
        self._narrow = False
        self._auto_hidden = False

        # Elided, the whole text in its tooltip: in a narrow window the names of a pair ran past the
        # device label, cut mid-word with nothing to say so.
        self.model_label = ElidedLabel("No model loaded")
        self.model_label.setObjectName("modelStatus")
        self.load_bar = QProgressBar()
        self.load_bar.setRange(0, 100)
        self.load_bar.setMaximumWidth(160)
        self.load_bar.setTextVisible(False)
        self.load_bar.setVisible(False)
        self.device_label = QLabel()
        self.device_label.setObjectName("modelStatus")
        self.statusBar().addWidget(self.model_label, 1)
        self.statusBar().addWidget(self.load_bar)
        self.statusBar().addPermanentWidget(self.device_label)
        self.api = ApiServerController(host, self)
        self.api_label = QLabel()
        self.api_label.setObjectName("modelStatus")
        self.api_label.setVisible(False)
        self.statusBar().addPermanentWidget(self.api_label)
        self.api.status_changed.connect(lambda t: (self.api_label.setText(t), self.api_label.setVisible(bool(t))))
        self.api.failed.connect(lambda t: self.show_notice("error", t))

        self.session = ChatSession(store, host, self.view, lambda: self.settings)
        self._make_actions()

        self.sidebar.new_requested.connect(self.new_chat)
        self.sidebar.selected.connect(self.session.open)
        self.sidebar.rename_requested.connect(self._rename)
        self.sidebar.delete_requested.connect(self.delete_chat)
        self.sidebar.search_changed.connect(lambda _q: self.refresh_sidebar())
        self.sidebar.export_requested.connect(self.export_chat)
        self.composer.send_requested.connect(self.session.send)
        self.composer.stop_requested.connect(self.session.stop)
        self.composer.notice.connect(self.show_notice)
        self.view.copied.connect(lambda _t: self.statusBar().showMessage("Copied to the clipboard", 2000))
        self.session.busy_changed.connect(self._on_busy)
        self.session.notice.connect(self.show_notice)
        self.session.conversations_changed.connect(self.refresh_sidebar)
        self.session.current_changed.connect(self._on_current_changed)
        self.session.measuring_changed.connect(self._on_measuring)
        self.session.draft_off_requested.connect(self._turn_draft_off)
        host.ready.connect(self._on_ready)
        host.ready.connect(self.api.model_ready)
        host.loading.connect(self._on_loading)
        host.failed.connect(self._on_failed)

        self.refresh_sidebar()
        self.view.set_zoom(self.settings.chat_zoom)
        hints = QCoreApplication.instance().styleHints() if QCoreApplication.instance() else None  # type: ignore[union-attr]
        if hints is not None and hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(self._on_system_scheme)  # Qt 6.5+: follow the desktop live
        self.api.apply(self.settings)
        self.composer.set_ready(False, "Loading the model…")
        self.composer.focus()
        if auto_load:
            QTimer.singleShot(0, self.load_model)
        QTimer.singleShot(50, self._warm_up)

    def _warm_up(self) -> None:
        """Pay one-time costs while idle, not on the first Send: pygments lexers, and the Python
        enum classes PySide creates lazily the first time a message widget touches them."""
        warm_up()
        from atomicchat.store.records import Message
        from atomicchat.ui.chat.message_widget import MessageWidget

        for role in ("user", "assistant"):
            w = MessageWidget(Message(0, 0, 0, role, "warm *up*\n\n```python\nx = 1\n```"))
            w.deleteLater()

    # actions and menus -------------------------------------------------------------------
    def _action(self, text: str, shortcut: str | QKeySequence.StandardKey | None, slot, tip: str = "") -> QAction:
        a = QAction(text, self)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        if tip:
            a.setStatusTip(tip)
        a.triggered.connect(slot)
        self.addAction(a)
        return a

    def _make_actions(self) -> None:
        self.new_action = self._action("New chat", "Ctrl+N", self.new_chat)
        self.search_action = self._action("Search chats", "Ctrl+F", self.sidebar.search.setFocus)
        self.attach_action = self._action("Attach text files…", "Ctrl+O", self.composer.choose_files,
                                          "Attach code, notes or other text files to the next message")
        self.quit_action = self._action("Quit", "Ctrl+Q", self.close)
        self.stop_action = self._action("Stop", "Esc", self.session.stop, "Stop writing the reply")
        self.stop_action.setEnabled(False)
        self.regen_action = self._action("Regenerate reply", "Ctrl+R", self.session.regenerate)
        self.continue_action = self._action("Continue reply", "Ctrl+Shift+R", self.session.continue_reply,
                                            "Write more of the last reply, from where it ended")
        self.rename_action = self._action("Rename chat", None, self.sidebar.rename_current)
        self.delete_action = self._action("Delete chat", None, self._delete_current)
        self.manager_action = self._action("Model manager…", "Ctrl+M", self.open_model_manager)
        self.baseline_action = self._action(
            "Measure target-only baseline",
            None,
            self.session.measure_baseline,
            "Measure the real speedup once for this model",
        )
        self.settings_action = self._action("Settings…", "Ctrl+,", self.open_settings)
        self.colour_action = self._action("Colour accepted draft tokens", None, self._toggle_colour)
        self.colour_action.setCheckable(True)
        self.colour_action.setChecked(self.settings.colour_draft_tokens)
        self._sync_actions()
        self.sidebar_action = self._action("Chat list", "Ctrl+B", self._toggle_sidebar, "Show or hide the chat list")
        self.zoom_in_action = self._action("Zoom in", QKeySequence.StandardKey.ZoomIn, lambda: self.zoom(1))
        self.zoom_in_action.setShortcuts([QKeySequence("Ctrl+="), QKeySequence("Ctrl++")])
        self.zoom_out_action = self._action("Zoom out", QKeySequence.StandardKey.ZoomOut, lambda: self.zoom(-1))
        self.zoom_out_action.setShortcuts([QKeySequence("Ctrl+-")])
        self.zoom_reset_action = self._action("Actual size", "Ctrl+0", lambda: self.zoom(None))
        self.about_action = self._action("About Atomic Chat", None, self.show_about)
        self.shortcuts_action = self._action("Keyboard shortcuts", "F1", self.show_shortcuts)
        self.export_md_action = self._action("Export chat as Markdown…", "Ctrl+E",
                                             lambda: self.export_chat(self.session.conversation_id, "markdown"))
        self.export_json_action = self._action("Export chat as JSON…", None,
                                               lambda: self.export_chat(self.session.conversation_id, "json"))
        self.sidebar_action.setCheckable(True)
        self.sidebar_action.setChecked(True)
        bar = self.menuBar()
        m = bar.addMenu("&File")
        for a in (self.new_action, self.search_action, self.attach_action):
            m.addAction(a)
        m.addSeparator()
        m.addAction(self.quit_action)
        m = bar.addMenu("&Chat")
        for a in (self.stop_action, self.regen_action, self.continue_action, self.rename_action, self.delete_action):
            m.addAction(a)
        m = bar.addMenu("&Model")
        for a in (self.manager_action, self.baseline_action, self.settings_action):
            m.addAction(a)
        m = bar.addMenu("&View")
        m.addAction(self.sidebar_action)
        m.addAction(self.colour_action)
        m.addSeparator()
        for a in (self.zoom_in_action, self.zoom_out_action, self.zoom_reset_action):
            m.addAction(a)
        themes = m.addMenu("Theme")
        group = QActionGroup(self)
        self.theme_actions: dict[str, QAction] = {}
        for mode, label in (("system", "Follow the system"), ("light", "Light"), ("dark", "Dark")):
            a = themes.addAction(label)
            a.setCheckable(True)
            a.setChecked(self.settings.theme == mode)
            a.triggered.connect(lambda _=False, md=mode: self.set_theme(md))
            group.addAction(a)
            self.theme_actions[mode] = a
        m = bar.addMenu("&Help")
        m.addAction(self.shortcuts_action)
        m.addAction(self.about_action)
        f = bar.actions()[0].menu()  # File: export the open chat
        f.insertAction(self.quit_action, self.export_md_action)
        f.insertAction(self.quit_action, self.export_json_action)
        f.insertSeparator(self.quit_action)

    # view, help and export -----------------------------------------------------------------
    def zoom(self, step: int | None) -> None:
        z = 0 if step is None else self.settings.chat_zoom + step
        self.apply_settings(replace(self.settings, chat_zoom=z))
        self.view.set_zoom(self.settings.chat_zoom)

    def set_theme(self, mode: str) -> None:
        from PySide6.QtWidgets import QApplication

        from atomicchat.ui.common.theme import apply_theme

        self.apply_settings(replace(self.settings, theme=mode))
        app = QApplication.instance()
        if app is not None:
            apply_theme(app, self.settings.theme)  # type: ignore[arg-type]
        self.session.redraw()  # replies are rendered with the theme's code colours

    def _on_system_scheme(self, *_args: object) -> None:
        if self.settings.theme == "system":
            self.set_theme("system")

    def show_about(self) -> None:
        from atomicchat.ui.common.about_dialog import AboutDialog

        AboutDialog(self).exec()

    def show_shortcuts(self) -> None:
        from atomicchat.ui.common.shortcuts_dialog import ShortcutsDialog

        ShortcutsDialog(self.findChildren(QAction), self).exec()

    def export_chat(self, conversation_id: int | None, fmt: str) -> None:
        from PySide6.QtWidgets import QFileDialog

        from atomicchat import export

        conv = self.store.chats.get(conversation_id) if conversation_id is not None else None
        if conv is None:
            self.show_notice("warning", "Open a chat first; there is nothing to export yet.")
            return
        ext = export.FORMATS[fmt]
        path, _ = QFileDialog.getSaveFileName(self, "Export chat", str(Path.home() / export.suggested_name(conv, fmt)),
                                              f"{'JSON' if fmt == 'json' else 'Markdown'} (*{ext})")
        if not path:
            return
        try:
            out = export.write_export(Path(path), conv, self.store.chats.messages(conv.id), fmt)
        except OSError as exc:
            self.show_notice("error", f"The chat could not be exported to {path}: {exc.strerror or exc}.")
            return
        self.statusBar().showMessage(f"Exported to {out}", 4000)

    def _toggle_sidebar(self, on: bool) -> None:
        self._auto_hidden = False
        self.sidebar.setVisible(on)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt naming
        """A narrow window gives its width to the chat: the list hides, and comes back when it widens."""
        super().resizeEvent(event)
        narrow = self.width() < NARROW_PX
        if narrow == self._narrow:
            return
        self._narrow = narrow
        if narrow and self.sidebar_action.isChecked():
            self.sidebar_action.setChecked(False)
            self.sidebar.setVisible(False)
            self._auto_hidden = True
        elif not narrow and self._auto_hidden:
            self.sidebar_action.setChecked(True)
            self.sidebar.setVisible(True)
            self._auto_hidden = False

    # notices -----------------------------------------------------------------------------
    def show_notice(self, kind: str, text: str) -> None:
        timeout = 8000 if kind == "info" else 0
        self.notice.show_notice(text, kind, timeout_ms=timeout)

    # sidebar -----------------------------------------------------------------------------
    def refresh_sidebar(self) -> None:
        chats = self.store.chats.conversations(self.sidebar.search.text())
        self.sidebar.set_conversations(chats, self.session.conversation_id)

    def _on_current_changed(self, conversation_id: int | None) -> None:
        self.sidebar.select(conversation_id)
        self._sync_actions()
        self.composer.focus()

    def new_chat(self) -> None:
        self.session.new_chat()
        self.sidebar.select(None)
        self.composer.focus()

    def _rename(self, conversation_id: int, title: str) -> None:
        self.store.chats.rename(conversation_id, title)
        self.refresh_sidebar()

    def _delete_current(self) -> None:
        if self.session.conversation_id is not None:
            self.delete_chat(self.session.conversation_id)

    def delete_chat(self, conversation_id: int) -> None:
        conv = self.store.chats.get(conversation_id)
        if conv is None:
            return
        if conversation_id == self.session.conversation_id:
            self.session.new_chat()
        self.store.chats.delete(conversation_id)
        self.refresh_sidebar()

        def undo() -> None:
            self.store.chats.restore(conversation_id)
            self.refresh_sidebar()
            self.session.open(conversation_id)

        self.undo_bar.show_notice(f"Deleted “{conv.title}”.", "info", "Undo", undo, timeout_ms=UNDO_MS)

    # generation state --------------------------------------------------------------------
    def _on_busy(self, busy: bool) -> None:
        self.composer.set_busy(busy)
        self.baseline_action.setEnabled(not busy)
        self._sync_actions()
        if not busy:
            self.refresh_sidebar()

    def _sync_actions(self) -> None:
        """Actions that cannot do anything now are disabled (and drawn so, see theme.py)."""
        busy = self.session.busy
        has_chat = self.session.conversation_id is not None
        self.stop_action.setEnabled(busy)
        self.regen_action.setEnabled(not busy and has_chat and self.ready is not None)
        self.continue_action.setEnabled(not busy and self.ready is not None and self.session.can_continue())
        self.rename_action.setEnabled(has_chat)
        self.delete_action.setEnabled(has_chat)

    def _on_measuring(self, busy: bool) -> None:
        """The baseline runs in the worker's queue: typing goes on, a reply sent now waits a moment."""
        self.baseline_action.setEnabled(not busy)
        if busy:
            self.statusBar().showMessage("Measuring this model's target-only speed once, for the speedup figure…")
        else:
            self.statusBar().clearMessage()
        for w in self.view.widgets():
            if w.stats_bar is not None:
                w.stats_bar.set_measuring(busy)

    def _toggle_colour(self, on: bool) -> None:
        self.settings = replace(self.settings, colour_draft_tokens=on)
        self.store.settings.save(self.settings)
        self.session.set_colour_drafts(on)

    # model loading -----------------------------------------------------------------------
    def load_model(self, choice: ModelChoice | None = None) -> None:
        """Load `choice`, or the automatic pick; with nothing installed, send the user to the manager."""
        choice = choice or self.models.choose(self.settings)
        self.choice = choice
        if choice is None:
            self.ready = None
            self.session.set_model(None)
            self.model_label.setText("No model installed")
            self.device_label.setText("")
            self.composer.set_ready(False, "No model yet: open the model manager (Ctrl+M) to download or import one")
            self.view.set_empty_text(
                "No model installed yet",
                "Atomic Chat runs models on this computer. Open the model manager (Ctrl+M) to download a "
                "model pair or import a GGUF file you already have.",
            )
            self._show_load_notice(
                "No model is installed. Download one or import a GGUF file to start chatting.", "warning"
            )
            QTimer.singleShot(0, self.open_model_manager)
            return
        req = self.settings.engine_config(choice.target, choice.draft)
        self.model_label.setText(f"Loading {choice.target.name}…")
        self.load_bar.setValue(0)
        self.load_bar.setVisible(True)
        self.composer.set_ready(False, "Loading the model…")
        self.host.load(req)

    def _turn_draft_off(self, target: Path) -> None:
        """DFlash was measured slower than the target alone: remember it for this model and reload."""
        self.apply_settings(self.settings.with_draft_off(str(target), True))  # reloads without the draft
        self.show_notice("info", f"DFlash is off for {target.name}: it was slower than the model alone on this "
                                 "computer. Settings ▸ Use the DFlash draft turns it back on.")

    def _on_loading(self, stage: str, value: float) -> None:
        self.load_bar.setVisible(True)
        span = (0, 70) if stage == "target" else (70, 100)
        self.load_bar.setValue(int(span[0] + (span[1] - span[0]) * max(0.0, min(value, 1.0))))

    def _on_ready(self, ready: ModelReady) -> None:
        name = self.models.display_name(ready.request.target_path)
        if name:
            ready = replace(ready, info=replace(ready.info, target_name=name))
        self.ready = ready
        self.models.mark_used(ready.request.target_path)
        self.session.set_model(ready)
        self.load_bar.setVisible(False)
        info = ready.info
        pair = (
            f"Model: {info.target_name}  ·  DFlash draft: {info.draft_name}"
            if info.draft_name
            else f"Model: {info.target_name}  ·  no draft"
        )
        self.model_label.setText(pair)
        self.device_label.setText(f"Device: {info.device}")
        self.device_label.setToolTip(
            "\n".join(getattr(info, "notes", ()) or ()) or f"{info.gpu_layers_used} layers on the GPU"
        )
        self.composer.set_ready(True)
        self.composer.set_context(int(getattr(info, "n_ctx", 0) or 0) or None)
        self._sync_actions()
        self.view.set_empty_text("Start a conversation", EMPTY_HINT)
        base = "" if getattr(info, "has_chat_template", True) else (
            f"{info.target_name} has no chat template, so it looks like a base model (it continues text rather "
            "than answering); Atomic Chat lays the chat out as ChatML for it.")
        notes = [n for n in (self.choice.note if self.choice else "", ready.warning, base) if n]
        if notes:
            self.notice.show_notice(" ".join(notes), "warning" if ready.warning else "info")
            self._load_notice = True  # e.g. "Using the bundled demo model": gone when another model loads
        elif self._load_notice:
            self.notice.dismiss()
            self._load_notice = False
        if self._manager is not None:
            self._manager.set_current(ready.request.target_path, ready.request.draft_path)

    def _on_failed(self, failure: WorkerFailure) -> None:
        if failure.kind == "crash":  # the engine process died or hung; the window and the chat stay
            self.ready = None
            self.session.set_model(None)
            self._sync_actions()
            self.model_label.setText("The model stopped")
            self.composer.set_ready(False, "The model stopped; reload it to go on")
            self.notice.show_notice(failure.message, "error", "Reload model", lambda: self.load_model(self.choice))
            self._load_notice = True
            return
        if failure.kind != "load":
            return
        self.ready = None
        self.session.set_model(None)
        self._sync_actions()
        self.load_bar.setVisible(False)
        self.model_label.setText("No model loaded")
        self.device_label.setText("")
        self.composer.set_ready(False, "The model could not be loaded; pick another one in the model manager (Ctrl+M)")
        self._show_load_notice(f"The model could not be loaded: {failure.message}", "error")

    def _show_load_notice(self, text: str, kind: str) -> None:
        self.notice.show_notice(text, kind, "Open model manager", self.open_model_manager)
        self._load_notice = True

    def use_model(self, target: Path, draft: Path | None) -> None:
        """The user picked a model (model manager): remember it and load it."""
        self.settings = replace(self.settings, target_path=str(target), draft_path=str(draft) if draft else "")
        self.store.settings.save(self.settings)
        self.load_model()

    # dialogs -----------------------------------------------------------------------------
    def open_model_manager(self) -> None:
        if self._closing:
            return
        from atomicchat.ui.models.model_manager import ModelManager

        if self._manager is None:
            self._manager = ModelManager(self.models, lambda: self.settings, self)
            self._manager.model_chosen.connect(self.use_model)
        manager = self._manager
        if self.ready is not None:
            manager.set_current(self.ready.request.target_path, self.ready.request.draft_path)
        manager.show()
        manager.raise_()
        manager.activateWindow()

    def open_settings(self) -> None:
        from atomicchat.ui.settings.settings_dialog import SettingsDialog

        target = str(self.choice.target) if self.choice else ""
        was_off = bool(target) and self.settings.draft_off(target)  # turned off for this model only
        shown = replace(self.settings, use_draft=self.settings.use_draft and not was_off)
        dialog = SettingsDialog(shown, self.ready.info if self.ready else None, self,
                                recommended=self.session.recommended)
        if dialog.exec():
            new = dialog.result_settings()
            if was_off:
                new = new.with_draft_off(target, False) if new.use_draft else replace(new, use_draft=self.settings.use_draft)
            self.apply_settings(new)

    def apply_settings(self, new: AppSettings) -> None:
        new = new.clamped()
        old, self.settings = self.settings, new
        self.store.settings.save(new)
        self.api.apply(new)
        if new.colour_draft_tokens != old.colour_draft_tokens:
            self.colour_action.setChecked(new.colour_draft_tokens)
            self.session.set_colour_drafts(new.colour_draft_tokens)
        if any(getattr(old, k) != getattr(new, k) for k in LOAD_KEYS):
            if self.session.busy:
                self.session.stop()
            same_files = (old.target_path, old.draft_path) == (new.target_path, new.draft_path)
            self.load_model(self.choice if same_files else None)

    # shutdown ----------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        self.shutdown()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """Stop the reply (it is saved), free the model on its thread, close the manager."""
        if self._closing:
            return
        self._closing = True
        self.session.stop()
        self.api.stop()
        if self._manager is not None:
            self._manager.shutdown()
        self.host.close()
        QCoreApplication.processEvents()  # deliver the worker's last chunk and "finished"
        self.session.save_interrupted()
