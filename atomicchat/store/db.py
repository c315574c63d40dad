"""The SQLite connection: WAL journal, foreign keys, and a numbered list of schema migrations.

`PRAGMA user_version` holds the schema version. Each migration moves the file one version up
inside a transaction, so an interrupted upgrade leaves the old schema intact.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from atomicchat import paths

DB_NAME = "atomicchat.sqlite3"


class StoreError(Exception):
    """A storage problem the user can act on; `str(exc)` is shown as is."""


def _run(conn: sqlite3.Connection, script: str) -> None:
    # Not executescript(): it COMMITs first, which would break the migration's transaction.
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def _v1_initial(conn: sqlite3.Connection) -> None:
    _run(
        conn,
        """
        CREATE TABLE conversations (
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            deleted_at REAL
        );
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
            content TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'done',
            created_at REAL NOT NULL,
            stats TEXT,
            UNIQUE (conversation_id, position)
        );
        CREATE INDEX messages_by_conversation ON messages (conversation_id, position);
        CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """,
    )


def _v2_baselines(conn: sqlite3.Connection) -> None:
    # Target-only speed per model and machine, measured on demand for the speedup figure.
    _run(
        conn,
        """
        CREATE TABLE baselines (
            key TEXT PRIMARY KEY,
            tokens_per_second REAL NOT NULL,
            device TEXT NOT NULL DEFAULT '',
            measured_at REAL NOT NULL
        );
        CREATE INDEX conversations_by_update ON conversations (updated_at DESC);
        """,
    )


def _v3_versions(conn: sqlite3.Connection) -> None:
    # Alternatives of a message and of everything after it (regenerated replies, edited questions):
    # the tail that is not shown, kept whole. parent_id is the message it follows (0 at the start),
    # so a version belongs to one path of the conversation tree. Nothing is deleted to make room.
    _run(
        conn,
        """
        CREATE TABLE message_versions (
            id INTEGER PRIMARY KEY,
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            parent_id INTEGER NOT NULL,
            head_created REAL NOT NULL,
            max_id INTEGER NOT NULL,
            messages TEXT NOT NULL
        );
        CREATE INDEX versions_by_place ON message_versions (conversation_id, position, parent_id)
        """,
    )


def _v4_baseline_depth(conn: sqlite3.Connection) -> None:
    # The target-only speed as a function of context length (atomicchat.stats.TargetSpeed): rows
    # measured before keep NULL here, which the app reads as "measure again".
    _run(
        conn,
        """
        ALTER TABLE baselines ADD COLUMN depth REAL;
        ALTER TABLE baselines ADD COLUMN slope REAL NOT NULL DEFAULT 0;
        ALTER TABLE baselines ADD COLUMN far_depth REAL NOT NULL DEFAULT 0
        """,
    )


# MIGRATIONS[i] upgrades a file at version i to version i + 1. Append only; never edit a shipped one.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _v1_initial, _v2_baselines, _v3_versions, _v4_baseline_depth,
]


def default_db_path() -> Path:
    return paths.data_dir() / DB_NAME


class Database:
    """One open database. Use from a single thread (the UI thread)."""

    def __init__(
        self, path: Path | None = None, migrations: list[Callable[[sqlite3.Connection], None]] | None = None
    ) -> None:
        self.path = Path(path) if path is not None else default_db_path()
        self._migrations = MIGRATIONS if migrations is None else migrations
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=5.0)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"Cannot open the chat database at {self.path}: {exc}.") from exc
        self.conn.row_factory = sqlite3.Row
        try:
            self.conn.execute("PRAGMA busy_timeout = 10000")  # a second app creating the file at once waits
            self._journal_wal()
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            check = self.conn.execute("PRAGMA quick_check").fetchone()
            if check is not None and str(check[0]).lower() != "ok":
                raise sqlite3.DatabaseError(f"integrity check: {check[0]}")
            self._migrate()
        except StoreError:
            raise
        except sqlite3.Error as exc:
            self.conn.close()
            text = str(exc).lower()
            if "readonly" in text or "read-only" in text:
                raise StoreError(f"The chat database at {self.path} cannot be written (the file or its folder is "
                                 "read-only).") from exc
            raise StoreError(f"The chat database at {self.path} is damaged or not a database ({exc}).") from exc

    def _journal_wal(self) -> None:
        """Switch to WAL. Two processes creating the file at the same moment can get "locked" here
        without SQLite's busy handler being asked, so retry for a few seconds before giving up."""
        import time

        deadline = time.monotonic() + 10.0
        while True:
            try:
                self.conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc).lower() or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    @property
    def schema_version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    @property
    def journal_mode(self) -> str:
        return str(self.conn.execute("PRAGMA journal_mode").fetchone()[0])

    def _migrate(self) -> None:
        current, target = self.schema_version, len(self._migrations)
        if current > target:
            self.conn.close()
            raise StoreError(
                f"The chat database at {self.path} was written by a newer Atomic Chat (schema {current}, "
                f"this version knows {target}). Update Atomic Chat to open it."
            )
        for version in range(current, target):
            try:
                with self.transaction():  # BEGIN IMMEDIATE: one process migrates, the other waits
                    if self.schema_version > version:
                        continue  # another process did this step while we waited for the lock
                    self._migrations[version](self.conn)
                    self.conn.execute(f"PRAGMA user_version = {version + 1}")
            except sqlite3.Error as exc:
                self.conn.close()
                raise StoreError(
                    f"Could not upgrade the chat database at {self.path} from schema {version} ({exc}); "
                    "it was left as it was."
                ) from exc

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN ... COMMIT, rolled back on any exception (the connection is in autocommit mode)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass
