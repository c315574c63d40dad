"""`atomicchat bench`: benchmarks/bench.py of a source checkout, imported only when the command runs.

The benchmark builds llama-server with cmake and is not part of the installers; in an install without
the repository's benchmarks/ folder the command says so and exits 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from types import ModuleType

from atomicchat.cli.errors import CliError

ABSENT = ("the benchmarks are not part of this install: in a source checkout of Atomic Chat run "
          "`python benchmarks/bench.py` (or `atomicchat bench`)")


def _checkout_module() -> ModuleType | None:
    root = Path(__file__).resolve().parents[2]
    if not (root / "benchmarks" / "bench.py").is_file():
        return None
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return importlib.import_module("benchmarks.bench")


def _absent(args: argparse.Namespace) -> int:
    raise CliError(ABSENT)


def register(sub: argparse._SubParsersAction) -> None:
    module = _checkout_module()
    if module is not None:
        module.register(sub)
        return
    # every flag (even --help) reaches _absent, which says why the command cannot run here
    p = sub.add_parser("bench", help="(source checkout only) our engine next to llama.cpp's llama-server",
                       prefix_chars="\0", add_help=False)
    p.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    p.set_defaults(func=_absent)
