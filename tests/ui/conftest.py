"""Fixtures that build the real main window on a throwaway ATOMICCHAT_HOME (set by tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from atomicchat.store import open_store  # noqa: E402
from atomicchat.ui.common import async_tasks  # noqa: E402
from atomicchat.ui.main_window import MainWindow  # noqa: E402
from atomicchat.models.service import ModelChoice, ModelService  # noqa: E402
from atomicchat.ui.common.theme import apply_theme  # noqa: E402
from atomicchat.ui.engine.host import EngineHost  # noqa: E402
from tests.ui.fake_engine import Script, factory  # noqa: E402

WAIT_MS = 20000


@pytest.fixture
def qloop(qapp):
    """A qasync asyncio loop on the test QApplication (the model manager awaits on it)."""
    apply_theme(qapp)
    loop = async_tasks.install_loop(qapp)
    yield loop
    loop.close()


class NoModels(ModelService):
    """A model service with nothing installed and no demo, so tests choose the model themselves."""

    def choose(self, settings):  # noqa: D102
        return None

    def demo_pair(self):  # noqa: D102
        return None

    def first_run_model(self):  # noqa: D102
        return None


@pytest.fixture
def make_window(qtbot, qloop) -> Iterator[Callable[..., MainWindow]]:
    """make_window(target=, draft=, script=, models=) -> a shown MainWindow with the model loaded.

    With `script` the engine is tests/ui/fake_engine.py; without, the real engine. Windows and
    their engine threads are shut down at the end, stores closed.
    """
    made: list[tuple[MainWindow, object]] = []

    def make(
        target: Path | None = None,
        draft: Path | None = None,
        script: Script | None = None,
        models: ModelService | None = None,
        wait_ready: bool = True,
        timeout_ms: int = WAIT_MS,
    ) -> MainWindow:
        store = open_store()
        host = EngineHost(factory(script) if script is not None else None)
        window = MainWindow(store, host, models or NoModels(), auto_load=False)
        qtbot.addWidget(window)
        window.resize(1000, 700)
        window.show()
        made.append((window, store))
        if target is not None:
            window.load_model(ModelChoice(Path(target), Path(draft) if draft else None, "chosen"))
            if wait_ready:
                qtbot.waitUntil(lambda: window.ready is not None, timeout=timeout_ms)
        return window

    yield make
    for window, store in made:
        window.shutdown()
        window.close()
        store.close()


def send(qtbot, window: MainWindow, text: str, wait: bool = True, timeout_ms: int = WAIT_MS) -> None:
    window.composer.set_text(text)
    window.composer.button.click()
    if wait:
        qtbot.waitUntil(lambda: not window.session.busy, timeout=timeout_ms)


def last_widget(window: MainWindow):
    return window.view.widgets()[-1]
