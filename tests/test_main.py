"""`atomicchat` with a typo never starts the GUI: one line on stderr and exit 2, decided before Qt."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return subprocess.run([sys.executable, "-m", "atomicchat", *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("generat", "--model", "x"), "error: atomicchat: unknown command 'generat' (did you mean 'generate'?)"),
        (("modles", "list"), "error: atomicchat: unknown command 'modles' (did you mean 'models'?)"),
        (("--foo",), "error: atomicchat: unrecognized arguments: --foo"),
        (("--model",), "error: atomicchat: argument --model: expected one argument"),
    ],
)
def test_typos_are_one_line_and_exit_2_without_qt(args: tuple[str, ...], expected: str) -> None:
    r = _run(*args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected), r.stderr
    assert "qt." not in r.stderr.lower()  # Qt never started (no display here: it would abort with 134)


def test_help_and_help_commands() -> None:
    r = _run("--help")
    assert r.returncode == 0 and "--model" in r.stdout and "--help-commands" in r.stdout
    r = _run("--help-commands")
    assert r.returncode == 0 and "generate" in r.stdout and "models" in r.stdout
