"""One pattern for background work in the UI: run_op(runner, fn, ..., success=, failure=)."""

from __future__ import annotations

import threading

from atomicchat.models.errors import RegistryError
from atomicchat.ui.common import async_tasks


def test_success_and_failure_come_back_on_the_ui_thread(qloop, qtbot):
    runner = async_tasks.BlockingRunner()
    ui = threading.get_ident()
    got: list[tuple[str, object, bool]] = []

    def work(x: int) -> int:
        assert threading.get_ident() != ui
        return x * 2

    def fail() -> None:
        raise RegistryError("the registry is unreadable")

    async_tasks.run_op(runner, work, 21, success=lambda r: got.append(("ok", r, threading.get_ident() == ui)),
                       failure=lambda e: got.append(("error", e, False)))
    async_tasks.run_op(runner, fail, success=lambda r: got.append(("ok", r, False)),
                       failure=lambda e: got.append(("error", str(e), threading.get_ident() == ui)))
    qtbot.waitUntil(lambda: len(got) == 2, timeout=5000)
    assert sorted(got, key=lambda g: g[0]) == [("error", "the registry is unreadable", True), ("ok", 42, True)]
    runner.close()
