"""Where Atomic Chat keeps its files: bundled resources and per-user data (platformdirs)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from platformdirs import PlatformDirs

from atomicchat import APP_ID

_dirs = PlatformDirs(appname=APP_ID, appauthor=False)


def resources_dir() -> Path:
    """The read-only `resources/` folder: inside a PyInstaller bundle, else beside the package."""
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"


def data_dir() -> Path:
    """Per-user data (database, registry). ATOMICCHAT_HOME overrides it, which tests use."""
    override = os.environ.get("ATOMICCHAT_HOME")
    path = Path(override) / "data" if override else Path(_dirs.user_data_dir)
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir() -> Path:
    """Per-user cache (measured baselines, build caches)."""
    override = os.environ.get("ATOMICCHAT_HOME")
    path = Path(override) / "cache" if override else Path(_dirs.user_cache_dir)
    path.mkdir(parents=True, exist_ok=True)
    return path
