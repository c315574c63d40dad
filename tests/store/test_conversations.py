from atomicchat.store import ReplyStats, open_store, title_from_text
from atomicchat.store.records import DONE, INTERRUPTED, STREAMING


def _store(tmp_path):
    return open_store(tmp_path / "c.sqlite3")


def test_create_add_and_read_back_in_order(tmp_path):
    s = _store(tmp_path)
    c = s.chats.create("Hello")
    s.chats.add_message(c.id, "user", "hi")
    s.chats.add_message(c.id, "assistant", "hello there", stats=ReplyStats(n_generated=3, generate_seconds=0.5))
    msgs = s.chats.messages(c.id)
    assert [(m.position, m.role, m.content) for m in msgs] == [(0, "user", "hi"), (1, "assistant", "hello there")]
    assert msgs[1].stats is not None and msgs[1].stats.tokens_per_second == 6.0


def test_list_is_newest_first_and_search_matches_titles_and_text(tmp_path):
    s = _store(tmp_path)
    a = s.chats.create("Rust lifetimes")
    b = s.chats.create("Cooking")
    s.chats.add_message(b.id, "user", "How long to boil an egg? 100% sure please")
    s.chats.touch(a.id)
    assert [c.id for c in s.chats.conversations()] == [a.id, b.id]
    assert [c.id for c in s.chats.conversations("EGG")] == [b.id]
    assert [c.id for c in s.chats.conversations("lifetimes")] == [a.id]
    assert [c.id for c in s.chats.conversations("100%")] == [b.id]
    assert s.chats.conversations("0%_") == []  # wildcards are literal


def test_soft_delete_restore_and_purge(tmp_path):
    s = _store(tmp_path)
    c = s.chats.create("x")
    s.chats.add_message(c.id, "user", "keep me")
    s.chats.delete(c.id)
    assert s.chats.conversations() == [] and s.chats.get(c.id) is None
    s.chats.restore(c.id)
    assert s.chats.get(c.id) is not None
    s.chats.delete(c.id)
    assert s.chats.purge_deleted() == 1
    assert s.db.conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 0  # cascade


def test_rename_normalises_whitespace_and_never_empties(tmp_path):
    s = _store(tmp_path)
    c = s.chats.create()
    s.chats.rename(c.id, "  My   plan \n")
    assert s.chats.get(c.id).title == "My plan"
    s.chats.rename(c.id, "   ")
    assert s.chats.get(c.id).title == "New chat"


def test_truncate_from_removes_later_messages(tmp_path):
    s = _store(tmp_path)
    c = s.chats.create()
    for i in range(4):
        s.chats.add_message(c.id, "user" if i % 2 == 0 else "assistant", f"m{i}")
    s.chats.truncate_from(c.id, 2)
    assert [m.content for m in s.chats.messages(c.id)] == ["m0", "m1"]
    assert s.chats.add_message(c.id, "user", "again").position == 2


def test_streaming_reply_survives_a_crash_as_interrupted(tmp_path):
    path = tmp_path / "crash.sqlite3"
    s = open_store(path)
    c = s.chats.create()
    m = s.chats.add_message(c.id, "assistant", "", status=STREAMING)
    s.chats.update_message(m.id, "partial text shown so far")
    # no close(): the process dies here
    s2 = open_store(path)
    (msg,) = s2.chats.messages(c.id)
    assert msg.content == "partial text shown so far"
    assert msg.status == INTERRUPTED


def test_update_message_writes_status_and_stats(tmp_path):
    s = _store(tmp_path)
    c = s.chats.create()
    m = s.chats.add_message(c.id, "assistant", "", status=STREAMING)
    stats = ReplyStats(n_drafted=10, n_accepted=7, n_draft_steps=2, step_accepted=[3, 4], draft_spans=[[0, 5]])
    s.chats.update_message(m.id, "done text", status=DONE, stats=stats)
    (msg,) = s.chats.messages(c.id)
    assert msg.status == DONE
    assert msg.stats.acceptance == 0.7 and msg.stats.tau == 4.5
    assert msg.stats.step_accepted == [3, 4] and msg.stats.draft_spans == [[0, 5]]


def test_bad_stats_json_is_ignored(tmp_path):
    s = _store(tmp_path)
    c = s.chats.create()
    m = s.chats.add_message(c.id, "assistant", "x")
    s.db.conn.execute("UPDATE messages SET stats = '{not json' WHERE id = ?", (m.id,))
    assert s.chats.messages(c.id)[0].stats is None
    s.db.conn.execute("""UPDATE messages SET stats = '{"n_generated": 4, "future_field": 1}' WHERE id = ?""", (m.id,))
    assert s.chats.messages(c.id)[0].stats.n_generated == 4


def test_title_from_text():
    assert title_from_text("\n  Explain monads\nplease") == "Explain monads"
    long = "How do I configure the build so that it produces a static binary for musl targets"
    t = title_from_text(long)
    assert t.endswith("…") and len(t) <= 50 and long.startswith(t[:-1])
    assert title_from_text("   ") == "New chat"
