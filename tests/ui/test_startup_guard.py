"""The real app at start-up: a damaged database is kept aside (renamed) and the app starts fresh; a
second start brings the first window to the front and exits at once."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ATOMICCHAT_HOME"}
    env.update(QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(tmp / "d"), XDG_CONFIG_HOME=str(tmp / "c"),
               XDG_CACHE_HOME=str(tmp / "x"))
    return env


def test_damaged_database_is_kept_aside_and_the_app_starts_fresh(tmp_path):
    env = _env(tmp_path)
    db = tmp_path / "d" / "atomicchat" / "atomicchat.sqlite3"
    db.parent.mkdir(parents=True)
    db.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))  # a header and then garbage
    quit_ = subprocess.run([sys.executable, "-m", "atomicchat", "--quit-after", "1"], capture_output=True, text=True,
                           timeout=120, env={**env, "ATOMICCHAT_STORE_ANSWER": "quit"})
    assert quit_.returncode == 1 and "damaged" in quit_.stderr and "Traceback" not in quit_.stderr
    assert db.exists()  # quitting leaves it where it was
    r = subprocess.run([sys.executable, "-m", "atomicchat", "--quit-after", "1"], capture_output=True, text=True,
                       timeout=120, env={**env, "ATOMICCHAT_STORE_ANSWER": "fresh"})
    assert r.returncode == 0, r.stderr[-1500:]
    kept = list(db.parent.glob("atomicchat.sqlite3.damaged-*"))
    assert len(kept) == 1 and kept[0].read_bytes()[:16] == b"SQLite format 3\x00" and db.exists()
    assert "Traceback" not in r.stderr


def test_second_instance_raises_the_first_and_exits(tmp_path):
    env = _env(tmp_path)
    first = subprocess.Popen([sys.executable, "-m", "atomicchat", "--quit-after", "40"], stderr=subprocess.PIPE,
                             text=True, env=env)
    try:
        import hashlib
        import tempfile

        data = Path(env["XDG_DATA_HOME"]) / "atomicchat"
        name = "atomicchat-" + hashlib.sha256(str(data).encode()).hexdigest()[:16]
        sock = Path(tempfile.gettempdir()) / name  # where QLocalServer listens on Linux
        deadline = time.monotonic() + 60
        while not sock.exists() and time.monotonic() < deadline:  # the first one is listening
            time.sleep(0.1)
        assert sock.exists()
        time.sleep(3)  # and has its window
        t0 = time.monotonic()
        second = subprocess.run([sys.executable, "-m", "atomicchat"], capture_output=True, text=True, timeout=60, env=env)
        assert second.returncode == 0 and "already running" in second.stderr
        assert time.monotonic() - t0 < 15
    finally:
        first.terminate()
        try:
            _, err = first.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            first.kill()
            _, err = first.communicate()
    assert "brought to the front" in err
