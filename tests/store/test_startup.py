"""Start-up never crashes on a bad database: every problem is one StoreError sentence, a damaged file
can be kept aside, and two processes creating a fresh database at once both succeed."""

from __future__ import annotations

import multiprocessing as mp
import os
import sqlite3
import stat

import pytest

from atomicchat.store import StoreError, open_store, set_aside


def _made(path):  # noqa: ANN001, ANN202
    s = open_store(path)
    c = s.chats.create("kept")
    s.chats.add_message(c.id, "user", "hello " * 2000)
    s.settings.save(s.settings.load())
    s.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write a read-only file")
def test_read_only_file_is_a_sentence(tmp_path):
    path = _made(tmp_path / "db.sqlite3")
    os.chmod(path, stat.S_IRUSR)
    with pytest.raises(StoreError, match="cannot be written|damaged"):
        open_store(path)


def test_unwritable_database_is_worded_as_such(tmp_path):
    path = _made(tmp_path / "db.sqlite3")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as ro:  # what a read-only mount does to writes
        with pytest.raises(sqlite3.OperationalError) as e:
            ro.execute("INSERT INTO settings VALUES ('x', '1')")
    from atomicchat.store import _describe

    assert "cannot be written" in _describe(path, e.value)


def test_garbage_in_a_table_page_is_a_sentence_and_can_be_kept_aside(tmp_path):
    path = _made(tmp_path / "db.sqlite3")
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) >= 3 * page
    data[2 * page : 3 * page] = os.urandom(page)  # a page of the messages table
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="damaged"):
        open_store(path)
    kept = set_aside(path)
    assert kept.exists() and not path.exists() and kept.name.startswith("db.sqlite3.damaged-")
    fresh = open_store(path)
    assert fresh.chats.conversations() == []
    fresh.close()


def test_garbage_in_settings_values_falls_back_per_key(tmp_path):
    path = _made(tmp_path / "db.sqlite3")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE settings SET value = '{not json' WHERE key = 'temperature'")
        conn.execute("UPDATE settings SET value = '\"a string\"' WHERE key = 'n_ctx'")
    s = open_store(path)
    loaded = s.settings.load()
    assert loaded.temperature == 0.0 and loaded.n_ctx == 4096
    s.close()


def _create(path: str, barrier) -> None:  # noqa: ANN001
    import sys
    import traceback
    from pathlib import Path

    barrier.wait()
    try:
        open_store(Path(path)).close()
    except BaseException:
        Path(path + f".err{os.getpid()}").write_text(traceback.format_exc())
        sys.exit(1)


def test_two_processes_create_a_fresh_database_at_once(tmp_path):
    from atomicchat.store.db import MIGRATIONS

    for attempt in range(3):
        path = tmp_path / f"race{attempt}.sqlite3"
        ctx = mp.get_context("spawn")
        barrier = ctx.Barrier(2)
        procs = [ctx.Process(target=_create, args=(str(path), barrier)) for _ in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        errors = [f.read_text() for f in tmp_path.glob(f"{path.name}.err*")]
        assert [p.exitcode for p in procs] == [0, 0], errors
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
