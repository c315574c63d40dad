"""Regenerated replies and edited messages are versions: nothing is deleted, every path comes back."""

from __future__ import annotations

import sqlite3

from atomicchat.store import open_store
from atomicchat.store.db import MIGRATIONS, Database


def _texts(store, cid):  # noqa: ANN001, ANN202
    return [m.content for m in store.chats.messages(cid)]


def test_regenerate_and_edit_keep_every_version(tmp_path):
    store = open_store(tmp_path / "db.sqlite3")
    c = store.chats.create("t")
    for role, text in (("user", "q1"), ("assistant", "a1"), ("user", "q2"), ("assistant", "a2")):
        store.chats.add_message(c.id, role, text)
    store.chats.set_aside_from(c.id, 3)  # regenerate a2
    store.chats.add_message(c.id, "assistant", "a2-second")
    assert _texts(store, c.id) == ["q1", "a1", "q2", "a2-second"]
    assert store.chats.versions(c.id, 3) == (1, 2)
    store.chats.set_aside_from(c.id, 2)  # edit q2: the old question and both its answers stay
    store.chats.add_message(c.id, "user", "q2-edited")
    store.chats.add_message(c.id, "assistant", "a-edited")
    assert store.chats.versions(c.id, 2) == (1, 2) and store.chats.versions(c.id, 3) == (0, 1)
    assert store.chats.version_counts(c.id) == {2: (1, 2)}
    assert store.chats.show_version(c.id, 2, 0)  # back to the old question: its own reply versions return
    assert _texts(store, c.id) == ["q1", "a1", "q2", "a2-second"]
    assert store.chats.version_counts(c.id) == {2: (0, 2), 3: (1, 2)}
    assert store.chats.show_version(c.id, 3, 0)
    assert _texts(store, c.id) == ["q1", "a1", "q2", "a2"]
    assert store.chats.show_version(c.id, 2, 1)
    assert _texts(store, c.id) == ["q1", "a1", "q2-edited", "a-edited"]
    assert not store.chats.show_version(c.id, 2, 5) and not store.chats.show_version(c.id, 2, 1)
    n_rows = store.db.conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    n_versions = store.db.conn.execute("SELECT COUNT(*) FROM message_versions").fetchone()[0]
    assert n_rows == 4 and n_versions == 2  # q2+a2-second+a2 kept in versions, nothing lost
    store.close()


def test_migration_carries_existing_chats_over(tmp_path):
    path = tmp_path / "old.sqlite3"
    old = Database(path, migrations=MIGRATIONS[:2])  # the schema before versions
    assert old.schema_version == 2
    old.conn.execute("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (1, 'old', 1, 1)")
    for pos, (role, text) in enumerate((("user", "hello"), ("assistant", "hi there"))):
        old.conn.execute(
            "INSERT INTO messages (conversation_id, position, role, content, created_at) VALUES (1, ?, ?, ?, ?)",
            (pos, role, text, 1.0 + pos),
        )
    old.close()
    store = open_store(path)
    assert store.db.schema_version == len(MIGRATIONS) == 4
    assert _texts(store, 1) == ["hello", "hi there"] and store.chats.versions(1, 1) == (0, 1)
    store.chats.set_aside_from(1, 1)
    store.chats.add_message(1, "assistant", "hello again")
    assert store.chats.versions(1, 1) == (1, 2)
    store.close()
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 4
