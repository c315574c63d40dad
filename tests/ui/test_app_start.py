"""`atomicchat` (no command) starts the window and exits cleanly: a separate process, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys

from atomicchat.store import open_store


def test_app_starts_and_quits_cleanly(tmp_path):
    env = dict(
        os.environ, ATOMICCHAT_HOME=str(tmp_path), QT_QPA_PLATFORM="offscreen", HF_HUB_CACHE=str(tmp_path / "hf")
    )
    proc = subprocess.run(
        [sys.executable, "-m", "atomicchat", "--quit-after", "2"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    store = open_store(tmp_path / "data" / "atomicchat.sqlite3")
    assert store.db.schema_version >= 2
    store.close()
