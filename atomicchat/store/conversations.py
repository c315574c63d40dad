"""Conversations and their messages.

Deletion is soft (`deleted_at`) so the window can offer Undo; `purge_deleted()` removes for good.
A reply being generated is written as it streams (status "streaming"); rows still in that state
when the app starts again were cut off by a crash and are marked "interrupted".
"""

from __future__ import annotations

import sqlite3
import time

from atomicchat.store.db import Database
from atomicchat.store.records import INTERRUPTED, STREAMING, Conversation, Message, ReplyStats

DEFAULT_TITLE = "New chat"
TITLE_CHARS = 48


def title_from_text(text: str) -> str:
    """A short title from the first user message: its first line, cut at a word near TITLE_CHARS."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if not line:
        return DEFAULT_TITLE
    if len(line) <= TITLE_CHARS:
        return line
    cut = line[:TITLE_CHARS].rsplit(" ", 1)[0]
    return (cut if len(cut) > TITLE_CHARS // 2 else line[:TITLE_CHARS]).rstrip(" ,.;:") + "…"


def _conversation(row: sqlite3.Row) -> Conversation:
    return Conversation(id=row["id"], title=row["title"], created_at=row["created_at"], updated_at=row["updated_at"])


def _message(row: sqlite3.Row) -> Message:
    return Message(
        id=row["id"],
        conversation_id=row["conversation_id"],
        position=row["position"],
        role=row["role"],
        content=row["content"],
        status=row["status"],
        created_at=row["created_at"],
        stats=ReplyStats.from_json(row["stats"]),
    )


class ConversationStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.conn = db.conn

    # conversations -------------------------------------------------------------------------

    def create(self, title: str = DEFAULT_TITLE) -> Conversation:
        now = time.time()
        cur = self.conn.execute(
            "INSERT INTO conversations (title, created_at, updated_at) VALUES (?, ?, ?)", (title, now, now)
        )
        return Conversation(id=int(cur.lastrowid or 0), title=title, created_at=now, updated_at=now)

    def get(self, conversation_id: int) -> Conversation | None:
        row = self.conn.execute(
            "SELECT * FROM conversations WHERE id = ? AND deleted_at IS NULL", (conversation_id,)
        ).fetchone()
        return _conversation(row) if row else None

    def conversations(self, query: str = "") -> list[Conversation]:
        """Newest first. A query matches the title or any message text, case-insensitively."""
        if not query.strip():
            rows = self.conn.execute(
                "SELECT * FROM conversations WHERE deleted_at IS NULL ORDER BY updated_at DESC, id DESC"
            ).fetchall()
            return [_conversation(r) for r in rows]
        pattern = "%" + query.strip().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self.conn.execute(
            """
            SELECT * FROM conversations c
            WHERE c.deleted_at IS NULL AND (
                c.title LIKE ?1 ESCAPE '\\'
                OR EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.content LIKE ?1 ESCAPE '\\')
            )
            ORDER BY c.updated_at DESC, c.id DESC
            """,
            (pattern,),
        ).fetchall()
        return [_conversation(r) for r in rows]

    def rename(self, conversation_id: int, title: str) -> None:
        title = " ".join(title.split()) or DEFAULT_TITLE
        self.conn.execute("UPDATE conversations SET title = ? WHERE id = ?", (title, conversation_id))

    def touch(self, conversation_id: int) -> None:
        self.conn.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (time.time(), conversation_id))

    def delete(self, conversation_id: int) -> None:
        """Hide the chat; `restore()` brings it back until `purge_deleted()` runs."""
        self.conn.execute("UPDATE conversations SET deleted_at = ? WHERE id = ?", (time.time(), conversation_id))

    def restore(self, conversation_id: int) -> None:
        self.conn.execute("UPDATE conversations SET deleted_at = NULL WHERE id = ?", (conversation_id,))

    def purge_deleted(self) -> int:
        cur = self.conn.execute("DELETE FROM conversations WHERE deleted_at IS NOT NULL")
        return cur.rowcount

    # messages ------------------------------------------------------------------------------

    def messages(self, conversation_id: int) -> list[Message]:
        rows = self.conn.execute(
            "SELECT * FROM messages WHERE conversation_id = ? ORDER BY position", (conversation_id,)
        ).fetchall()
        return [_message(r) for r in rows]

    def add_message(
        self, conversation_id: int, role: str, content: str, status: str = "done", stats: ReplyStats | None = None
    ) -> Message:
        now = time.time()
        with self.db.transaction():
            row = self.conn.execute(
                "SELECT COALESCE(MAX(position), -1) + 1 FROM messages WHERE conversation_id = ?", (conversation_id,)
            ).fetchone()
            position = int(row[0])
            cur = self.conn.execute(
                "INSERT INTO messages (conversation_id, position, role, content, status, created_at, stats)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (conversation_id, position, role, content, status, now, stats.to_json() if stats else None),
            )
            self.conn.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, conversation_id))
        return Message(
            id=int(cur.lastrowid or 0),
            conversation_id=conversation_id,
            position=position,
            role=role,
            content=content,
            status=status,
            created_at=now,
            stats=stats,
        )

    def update_message(
        self, message_id: int, content: str, status: str | None = None, stats: ReplyStats | None = None
    ) -> None:
        """Write the text so far (and status/stats when given). Called every ~0.5 s while streaming."""
        sets, args = ["content = ?"], [content]
        if status is not None:
            sets.append("status = ?")
            args.append(status)
        if stats is not None:
            sets.append("stats = ?")
            args.append(stats.to_json())
        self.conn.execute(f"UPDATE messages SET {', '.join(sets)} WHERE id = ?", (*args, message_id))

    def truncate_from(self, conversation_id: int, position: int) -> None:
        """Delete the message at `position` and every later one (regenerate / edit-and-resend)."""
        self.conn.execute(
            "DELETE FROM messages WHERE conversation_id = ? AND position >= ?", (conversation_id, position)
        )

    def mark_interrupted(self) -> int:
        """Replies left "streaming" by a crash keep their text and are labelled interrupted."""
        cur = self.conn.execute("UPDATE messages SET status = ? WHERE status = ?", (INTERRUPTED, STREAMING))
        return cur.rowcount
