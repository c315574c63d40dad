"""Conversations and their messages.

Deletion is soft (`deleted_at`) so the window can offer Undo; `purge_deleted()` removes for good.
A reply being generated is written as it streams (status "streaming"); rows still in that state
when the app starts again were cut off by a crash and are marked "interrupted".
"""

from __future__ import annotations

import json
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
            # Never reuse the id of a message kept in a version: versions hang from their parent's id.
            new_id = int(self.conn.execute(
                "SELECT MAX(COALESCE((SELECT MAX(id) FROM messages), 0),"
                " COALESCE((SELECT MAX(max_id) FROM message_versions), 0)) + 1"
            ).fetchone()[0])
            cur = self.conn.execute(
                "INSERT INTO messages (id, conversation_id, position, role, content, status, created_at, stats)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (new_id, conversation_id, position, role, content, status, now, stats.to_json() if stats else None),
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
        """Delete the message at `position` and every later one (for undoable operations only;
        regenerate and edit keep the old tail as a version: `set_aside_from`)."""
        self.conn.execute(
            "DELETE FROM messages WHERE conversation_id = ? AND position >= ?", (conversation_id, position)
        )

    # versions: regenerated replies and edited messages are alternatives, never deletions ----------
    def _parent_id(self, conversation_id: int, position: int) -> int:
        if position <= 0:
            return 0
        row = self.conn.execute(
            "SELECT id FROM messages WHERE conversation_id = ? AND position = ?", (conversation_id, position - 1)
        ).fetchone()
        return int(row["id"]) if row else 0

    def set_aside_from(self, conversation_id: int, position: int) -> None:
        """Keep the message at `position` and all later ones as a version, then clear them from the
        shown path (the new reply or edited message takes their place)."""
        with self.db.transaction():
            self._set_aside(conversation_id, position)

    def _set_aside(self, conversation_id: int, position: int) -> None:
        rows = self.conn.execute(
            "SELECT * FROM messages WHERE conversation_id = ? AND position >= ? ORDER BY position",
            (conversation_id, position),
        ).fetchall()
        if not rows:
            return
        tail = [{k: row[k] for k in row.keys()} for row in rows]
        self.conn.execute(
            "INSERT INTO message_versions (conversation_id, position, parent_id, head_created, max_id, messages)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (conversation_id, position, self._parent_id(conversation_id, position), float(rows[0]["created_at"]),
             max(int(r["id"]) for r in rows), json.dumps(tail)),
        )
        self.conn.execute(
            "DELETE FROM messages WHERE conversation_id = ? AND position >= ?", (conversation_id, position)
        )

    def _siblings(self, conversation_id: int, position: int) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT id, head_created FROM message_versions WHERE conversation_id = ? AND position = ? AND parent_id = ?",
            (conversation_id, position, self._parent_id(conversation_id, position)),
        ).fetchall()

    def versions(self, conversation_id: int, position: int) -> tuple[int, int]:
        """(index of the shown version, number of versions) for the message at `position`; (0, 1) if alone."""
        head = self.conn.execute(
            "SELECT created_at FROM messages WHERE conversation_id = ? AND position = ?", (conversation_id, position)
        ).fetchone()
        others = sorted(float(r["head_created"]) for r in self._siblings(conversation_id, position))
        if head is None:
            return 0, len(others)
        shown = float(head["created_at"])
        return sum(1 for t in others if t < shown), len(others) + 1

    def version_counts(self, conversation_id: int) -> dict[int, tuple[int, int]]:
        """versions() for every shown position that has alternatives."""
        out = {}
        for row in self.conn.execute(
            "SELECT DISTINCT position FROM message_versions WHERE conversation_id = ?", (conversation_id,)
        ).fetchall():
            index, count = self.versions(conversation_id, int(row["position"]))
            if count > 1:
                out[int(row["position"])] = (index, count)
        return out

    def show_version(self, conversation_id: int, position: int, index: int) -> bool:
        """Show version `index` (0-based, oldest first) at `position`: the shown tail is kept as a
        version and the chosen one takes its place, with the same message ids. False if out of range."""
        current, count = self.versions(conversation_id, position)
        if not 0 <= index < count or index == current:
            return False
        others = sorted(self._siblings(conversation_id, position), key=lambda r: float(r["head_created"]))
        chosen = others[index if index < current else index - 1]
        with self.db.transaction():
            data = self.conn.execute("SELECT messages FROM message_versions WHERE id = ?", (chosen["id"],)).fetchone()
            self.conn.execute("DELETE FROM message_versions WHERE id = ?", (chosen["id"],))
            self._set_aside(conversation_id, position)
            for m in json.loads(data["messages"]):
                self.conn.execute(
                    "INSERT INTO messages (id, conversation_id, position, role, content, status, created_at, stats)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (m["id"], conversation_id, m["position"], m["role"], m["content"], m["status"], m["created_at"],
                     m["stats"]),
                )
        return True

    def mark_interrupted(self) -> int:
        """Replies left "streaming" by a crash keep their text and are labelled interrupted."""
        cur = self.conn.execute("UPDATE messages SET status = ? WHERE status = ?", (INTERRUPTED, STREAMING))
        return cur.rowcount
