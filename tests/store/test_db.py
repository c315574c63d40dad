import sqlite3

import pytest

from atomicchat.store.db import MIGRATIONS, Database, StoreError


def test_new_database_uses_wal_and_latest_schema(tmp_path):
    db = Database(tmp_path / "a.sqlite3")
    assert db.journal_mode.lower() == "wal"
    assert db.schema_version == len(MIGRATIONS)
    tables = {r[0] for r in db.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"conversations", "messages", "settings", "baselines"} <= tables
    assert db.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_migrations_run_stepwise_from_an_old_file(tmp_path):
    path = tmp_path / "old.sqlite3"
    Database(path, migrations=MIGRATIONS[:1]).close()  # a file written by a version with schema 1
    db = Database(path)
    assert db.schema_version == len(MIGRATIONS)
    db.conn.execute("INSERT INTO baselines (key, tokens_per_second, measured_at) VALUES ('k', 1.0, 0)")


def test_failed_migration_leaves_old_version(tmp_path):
    path = tmp_path / "x.sqlite3"
    Database(path, migrations=MIGRATIONS[:1]).close()

    def broken(conn):
        conn.execute("CREATE TABLE half_done (x)")
        raise sqlite3.OperationalError("boom")

    with pytest.raises(StoreError, match="left as it was"):
        Database(path, migrations=[MIGRATIONS[0], broken])
    db = Database(path, migrations=MIGRATIONS[:1])
    assert db.schema_version == 1
    names = {r[0] for r in db.conn.execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in names


def test_newer_database_is_refused_with_a_plain_message(tmp_path):
    path = tmp_path / "new.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    conn.close()
    with pytest.raises(StoreError, match="newer Atomic Chat"):
        Database(path)


def test_garbage_file_is_reported_not_crashing(tmp_path):
    path = tmp_path / "junk.sqlite3"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="damaged or not a database"):
        Database(path)


def test_default_path_follows_atomicchat_home(tmp_path, monkeypatch):
    monkeypatch.setenv("ATOMICCHAT_HOME", str(tmp_path))
    db = Database()
    assert db.path.is_relative_to(tmp_path)
    assert db.path.exists()


def test_a_baseline_measured_before_depths_is_kept_but_marked(tmp_path):
    from atomicchat.stats import TargetSpeed
    from atomicchat.store import open_store

    path = tmp_path / "v3.sqlite3"
    old = Database(path, migrations=MIGRATIONS[:3])  # one speed per model, no context length
    old.conn.execute("INSERT INTO baselines (key, tokens_per_second, device, measured_at) VALUES ('k', 90.0, 'CPU', 0)")
    old.close()
    store = open_store(path)
    b = store.baselines.get("k")
    assert b.tokens_per_second == 90.0 and b.depth is None  # the app measures it again (ChatSession.baseline_for)
    store.baselines.put("k", TargetSpeed(100.0, 70.0, 1e-5, 1000.0), "CPU")
    assert store.baselines.get("k").speed == TargetSpeed(100.0, 70.0, 1e-5, 1000.0)
    store.close()
