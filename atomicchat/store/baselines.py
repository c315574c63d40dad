"""Measured target-only speed per model and machine, the denominator of the speedup figure.

It is measured once on demand (a short generation with the draft off) and cached here, because
a speedup against a guessed baseline would be a made-up number.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from atomicchat.store.db import Database


@dataclass(frozen=True)
class Baseline:
    key: str
    tokens_per_second: float
    device: str
    measured_at: float


def baseline_key(target_path: str, file_size: int, device: str, n_gpu_layers: int, draft: str = "") -> str:
    """Same file, same device, same offload, same draft: the same baseline. A changed file gets a new one."""
    key = f"{target_path}|{file_size}|{device}|{n_gpu_layers}"
    return f"{key}|{draft}" if draft else key


class BaselineStore:
    def __init__(self, db: Database) -> None:
        self.conn = db.conn

    def get(self, key: str) -> Baseline | None:
        row = self.conn.execute("SELECT * FROM baselines WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return Baseline(row["key"], row["tokens_per_second"], row["device"], row["measured_at"])

    def put(self, key: str, tokens_per_second: float, device: str) -> Baseline:
        now = time.time()
        self.conn.execute(
            "INSERT INTO baselines (key, tokens_per_second, device, measured_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(key) DO UPDATE SET tokens_per_second = excluded.tokens_per_second,"
            " device = excluded.device, measured_at = excluded.measured_at",
            (key, tokens_per_second, device, now),
        )
        return Baseline(key, tokens_per_second, device, now)
