"""Fixtures: an isolated HF cache + app data dir, a local fake Hub, a generated model pair, and a
guard that fails any connection attempt to anything but the local test server."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.models.fakehub import FakeHub
from tests.models.ggufs import make_draft, make_target

TARGET_REPO = "test-org/Tiny-GGUF"
DRAFT_REPO = "test-org/Tiny-DFlash-GGUF"
TARGET_FILE = "Tiny-Q4_K_M.gguf"
DRAFT_FILE = "Tiny-DFlash.Q8_0.gguf"


class NetworkBlocked(AssertionError):
    pass


@pytest.fixture(autouse=True)
def no_internet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only loopback connections are allowed: no test can reach the internet by accident."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def allowed(sock: socket.socket, address: object) -> bool:
        if sock.family == getattr(socket, "AF_UNIX", None):
            return True
        return isinstance(address, tuple) and address[0] in ("127.0.0.1", "::1")

    def connect(sock: socket.socket, address: object) -> None:
        if not allowed(sock, address):
            raise NetworkBlocked(f"test tried to connect to {address}")
        return real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: object) -> int:
        if not allowed(sock, address):
            raise NetworkBlocked(f"test tried to connect to {address}")
        return real_connect_ex(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HF cache, token path and app data all under tmp; offline mode off; no real token."""
    from huggingface_hub import constants

    hf_home = tmp_path / "hf"
    monkeypatch.setenv("HF_HOME", str(hf_home))
    monkeypatch.setenv("ATOMICCHAT_HOME", str(tmp_path / "app"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HUB_OFFLINE", "HF_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    # huggingface_hub read these at import time; point them at the same tmp folders
    monkeypatch.setattr(constants, "HF_HOME", str(hf_home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hf_home / "hub"))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(hf_home / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(hf_home / "stored_tokens"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    return tmp_path


@pytest.fixture
def fakehub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    from huggingface_hub import constants

    hub = FakeHub().start()
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setattr(constants, "ENDPOINT", hub.url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}")
    yield hub
    hub.stop()


def catalog_dict(target_sha: str | None = None, draft_sha: str | None = None, sizes: tuple[int, int] = (0, 0)) -> dict:
    facts = {
        "n_layer": 8, "n_embd": 64, "n_vocab": 65, "context_length": 4096,
        "kv_layers": 2, "n_head_kv": 2, "key_length": 16, "value_length": 16,
    }  # fmt: skip
    return {
        "schema": 1,
        "updated": "test",
        "pairs": [
            {
                "id": "tiny-dflash",
                "name": "Tiny + DFlash",
                "target": {
                    "name": "Tiny", "repo": TARGET_REPO, "arch": "qwen35", "facts": facts,
                    "quants": [
                        {"name": "Q4_K_M", "file": TARGET_FILE, "size": sizes[0] or None, "sha256": target_sha},
                        {"name": "Q8_0", "file": "Tiny-Q8_0.gguf", "size": 1000},
                    ],
                },
                "draft": {
                    "name": "Tiny DFlash", "repo": DRAFT_REPO, "arch": "dflash", "facts": dict(facts, n_layer=2, kv_layers=2),
                    "quants": [{"name": "Q8_0", "file": DRAFT_FILE, "size": sizes[1] or None, "sha256": draft_sha}],
                },
            }
        ],
    }  # fmt: skip


@dataclass
class Served:
    hub: FakeHub
    target: bytes
    draft: bytes

    def pair(self, *, with_sha: bool = True):  # -> ModelPair
        from atomicchat.models.catalog import parse

        t = self.hub.file(TARGET_REPO, TARGET_FILE)
        d = self.hub.file(DRAFT_REPO, DRAFT_FILE)
        data = catalog_dict(t.sha256 if with_sha else None, d.sha256 if with_sha else None, (t.size, d.size))
        return parse(data).pair("tiny-dflash")


@pytest.fixture
def served(fakehub: FakeHub, tmp_path: Path) -> Served:
    """A matching target + draft pair, generated now and published on the fake Hub."""
    src = tmp_path / "src"
    src.mkdir()
    target = make_target(src / TARGET_FILE)
    draft = make_draft(src / DRAFT_FILE)
    fakehub.add_bytes(TARGET_REPO, TARGET_FILE, target)
    fakehub.add_bytes(DRAFT_REPO, DRAFT_FILE, draft)
    return Served(fakehub, target, draft)
