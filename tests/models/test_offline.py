"""With everything installed, nothing in the model manager opens a network connection."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from atomicchat.models import catalog, fit, hardware
from atomicchat.models.downloads import DownloadJob
from atomicchat.models.registry import Registry
from tests.models.conftest import Served


class SocketUsed(AssertionError):
    pass


def test_installed_setup_never_touches_the_network(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from huggingface_hub import constants

    from atomicchat.cli import main

    pair = served.pair()
    DownloadJob(pair).run()  # setup, online
    cat_path = tmp_path / "cat.json"
    from tests.models.conftest import catalog_dict

    t, d = pair.files()
    cat_path.write_text(json.dumps(catalog_dict(t.sha256, d.sha256, (t.size or 0, d.size or 0))))
    served.hub.stop()

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    attempts: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise SocketUsed(f"network use while offline: {args[1:]}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)

    cat = catalog.load_catalog(cat_path)
    hw = hardware.probe()
    est = fit.estimate(cat.pair("tiny-dflash"), None, 2048, hardware=hw)
    assert est.total > 0
    result = DownloadJob(cat.pair("tiny-dflash")).run()
    assert all(f.already_present for f in result.files) and result.paired
    (ready,) = Registry().pairs()
    assert Path(ready.target.path).read_bytes() == served.target
    assert main(["models", "list", "--catalog", str(cat_path)]) == 0
    assert main(["models", "pull", "tiny-dflash", "--catalog", str(cat_path)]) == 0
    out = capsys.readouterr().out
    assert "already present" in out and "Ready: Tiny + DFlash" in out
    assert attempts == []


def test_set_offline_switches_our_code_and_huggingface_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    from atomicchat.models import hub

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert not hub.is_offline()
    hub.set_offline(True)
    assert hub.is_offline() and constants.HF_HUB_OFFLINE is True
    hub.set_offline(False)
    assert not hub.is_offline() and constants.HF_HUB_OFFLINE is False
