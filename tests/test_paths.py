"""Every per-user folder honours the XDG variables (platformdirs), the test model cache too."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import model_cache_dir


@pytest.mark.skipif(sys.platform != "linux", reason="XDG folders are the Linux convention")
def test_caches_follow_xdg_cache_home(tmp_path, monkeypatch) -> None:
    from atomicchat import paths

    monkeypatch.delenv("ATOMICCHAT_HOME")
    monkeypatch.delenv("ATOMICCHAT_TEST_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xc"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xd"))
    assert model_cache_dir() == tmp_path / "xc" / "atomicchat-tests"
    assert paths.cache_dir() == tmp_path / "xc" / "atomicchat"
    assert paths.data_dir() == tmp_path / "xd" / "atomicchat"
    monkeypatch.setenv("ATOMICCHAT_TEST_CACHE", str(tmp_path / "own"))
    assert model_cache_dir() == tmp_path / "own"
