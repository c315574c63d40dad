"""The chat list: New chat, search by text, rename in place (F2 / double-click), delete (Del), export;
each row shows when the chat was last active ("14:05", "Yesterday", "3 Dec").

It only shows and edits names; the window decides what happens (the store is not touched here).
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from atomicchat.chat_titles import relative_time
from atomicchat.store.records import Conversation
from atomicchat.ui.chat.chat_list_delegate import TIME_ROLE, ChatListDelegate

ID_ROLE = Qt.ItemDataRole.UserRole


class ChatSidebar(QWidget):
    new_requested = Signal()
    selected = Signal(int)  # conversation id
    rename_requested = Signal(int, str)
    delete_requested = Signal(int)
    search_changed = Signal(str)
    export_requested = Signal(int, str)  # conversation id, "markdown" | "json"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sidebar")
        col = QVBoxLayout(self)
        col.setContentsMargins(10, 10, 10, 10)
        col.setSpacing(8)
        self.new_button = QPushButton("+  New chat")
        self.new_button.setObjectName("newChat")
        self.new_button.setToolTip("New chat (Ctrl+N)")
        self.new_button.clicked.connect(self.new_requested)
        col.addWidget(self.new_button)
        self.search = QLineEdit()
        self.search.setObjectName("chatSearch")
        self.search.setPlaceholderText("Search chats")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.search_changed)
        col.addWidget(self.search)
        self.list = QListWidget()
        self.list.setObjectName("chatList")
        self.list.setEditTriggers(
            QAbstractItemView.EditTrigger.EditKeyPressed | QAbstractItemView.EditTrigger.DoubleClicked
        )
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setWordWrap(False)
        self.list.setUniformItemSizes(True)
        self.list.setItemDelegate(ChatListDelegate(self.list))
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.list.currentItemChanged.connect(self._on_current)
        self.list.itemChanged.connect(self._on_item_changed)
        col.addWidget(self.list, 1)
        self.no_match = QLabel("No chats match.")
        self.no_match.setObjectName("sidebarHint")
        self.no_match.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.no_match.setVisible(False)
        col.addWidget(self.no_match)

        self.rename_action = QAction("Rename", self)
        self.rename_action.setShortcut(QKeySequence(Qt.Key.Key_F2))
        self.rename_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.rename_action.triggered.connect(self.rename_current)
        self.delete_action = QAction("Delete", self)
        self.delete_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.delete_action.triggered.connect(self._delete_current)
        self.list.addAction(self.rename_action)
        self.list.addAction(self.delete_action)
        self._filling = False

    def set_conversations(self, chats: list[Conversation], current_id: int | None) -> None:
        self._filling = True
        self.list.clear()
        for c in chats:
            item = QListWidgetItem(c.title)
            item.setData(ID_ROLE, c.id)
            item.setToolTip(c.title)
            item.setData(TIME_ROLE, relative_time(c.updated_at))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            self.list.addItem(item)
            if c.id == current_id:
                self.list.setCurrentItem(item)
        self._filling = False
        self.no_match.setVisible(not chats and bool(self.search.text().strip()))

    def current_id(self) -> int | None:
        item = self.list.currentItem()
        return int(item.data(ID_ROLE)) if item is not None else None

    def select(self, conversation_id: int | None) -> None:
        self._filling = True
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(ID_ROLE) == conversation_id:
                self.list.setCurrentItem(item)
                break
        else:
            self.list.setCurrentItem(None)
        self._filling = False

    def rename_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.list.editItem(item)

    def _delete_current(self) -> None:
        cid = self.current_id()
        if cid is not None:
            self.delete_requested.emit(cid)

    def _on_current(self, item: QListWidgetItem | None, _prev: QListWidgetItem | None) -> None:
        if item is not None and not self._filling:
            self.selected.emit(int(item.data(ID_ROLE)))

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        if not self._filling:
            self.rename_requested.emit(int(item.data(ID_ROLE)), item.text())

    def _menu(self, pos: QPoint) -> None:
        item = self.list.itemAt(pos)
        if item is None:
            return
        self.list.setCurrentItem(item)
        menu = QMenu(self)
        menu.addAction(self.rename_action)
        menu.addAction(self.delete_action)
        menu.addSeparator()
        cid = int(item.data(ID_ROLE))
        for text, fmt in (("Export as Markdown…", "markdown"), ("Export as JSON…", "json")):
            menu.addAction(text).triggered.connect(lambda _=False, f=fmt: self.export_requested.emit(cid, f))
        menu.exec(self.list.viewport().mapToGlobal(pos))
