"""Measured target-only speed per model and machine, the denominator of the speedup figure.

It is measured once on demand (generations with the draft off, after a short and a long prompt)
and cached here, because a speedup against a guessed baseline would be a made-up number.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from atomicchat.stats import TargetSpeed
from atomicchat.store.db import Database


@dataclass(frozen=True)
class Baseline:
    key: str
    tokens_per_second: float
    device: str
    measured_at: float
    depth: float | None = None  # mean context position of the measurement; None: measured by an older version
    slope: float = 0.0  # seconds per token per further context position (TargetSpeed)
    far_depth: float = 0.0

    @property
    def speed(self) -> TargetSpeed:
        return TargetSpeed(self.tokens_per_second, self.depth or 0.0, self.slope, self.far_depth)


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
        return Baseline(row["key"], row["tokens_per_second"], row["device"], row["measured_at"],
                        row["depth"], row["slope"], row["far_depth"])

    def put(self, key: str, speed: TargetSpeed | float, device: str) -> Baseline:
        """A plain number is a speed measured at one (short) context length: no depth dependence."""
        sp = speed if isinstance(speed, TargetSpeed) else TargetSpeed(float(speed), 0.0)
        now = time.time()
        self.conn.execute(
            "INSERT INTO baselines (key, tokens_per_second, device, measured_at, depth, slope, far_depth)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(key) DO UPDATE SET tokens_per_second = excluded.tokens_per_second,"
            " device = excluded.device, measured_at = excluded.measured_at, depth = excluded.depth,"
            " slope = excluded.slope, far_depth = excluded.far_depth",
            (key, sp.tokens_per_second, device, now, sp.depth, sp.slope, sp.far_depth),
        )
        return Baseline(key, sp.tokens_per_second, device, now, sp.depth, sp.slope, sp.far_depth)
