"""A real `atomicchat serve` process on 127.0.0.1 (it binds port 0 and prints the port) with the demo pair."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from atomicchat import demo
from atomicchat.server.process import ServerProcess, isolated_env

API_KEY = "test-key-123"
CTX = 512


# Pinned: the adaptive policy picks lengths from measured timings, which the server process and this
# one never share, and the tests compare drafted counts between the two.
DRAFT_MAX = 5


def start_server(tmp: Path, *extra: str) -> ServerProcess:
    if not demo.demo_available():
        pytest.skip("the bundled demo pair is missing")
    return ServerProcess(["--model", str(demo.demo_target_path()), "--draft", str(demo.demo_draft_path()),
                          "--ctx", str(CTX), "--threads", "1", "--draft-max", str(DRAFT_MAX), *extra],
                         env=isolated_env(tmp))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with start_server(tmp_path_factory.mktemp("serve"), "--api-key", API_KEY) as s:
        yield s


@pytest.fixture(scope="module")
def reference():  # noqa: ANN201
    """The in-process engine on the same pair, for token-exact comparisons."""
    from atomicchat.engine import Engine, EngineConfig

    eng = Engine(EngineConfig(demo.demo_target_path(), demo.demo_draft_path(), n_ctx=CTX, n_threads=1,
                              draft_max=DRAFT_MAX))
    try:
        yield eng
    finally:
        eng.close()
