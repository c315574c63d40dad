"""Headless commands on the same engine the app uses: `generate`, `bench`, `models`, `self-test`, `serve`.

One module a command in this package (`atomicchat.cli.generate`, `.models`, `.selftest`, `.serve`, and
`.bench`, which loads benchmarks/bench.py from a source checkout); each imports `CliError` from
`atomicchat.cli.errors`, never this module.

Every command reports bad input as one plain line on stderr and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable

from atomicchat import __version__
from atomicchat.cli.errors import CliError

__all__ = ["COMMANDS", "CliError", "build_parser", "gui_parser", "main", "parse_gui_args"]

# name -> "module:function" that adds the sub-parser; modules are imported lazily so that
# `atomicchat models list` does not load llama.cpp and `generate` does not load huggingface_hub.
COMMANDS: dict[str, str] = {
    "generate": "atomicchat.cli.generate:register",
    "models": "atomicchat.cli.models:register",
    "bench": "atomicchat.cli.bench:register",
    "self-test": "atomicchat.cli.selftest:register",
    "serve": "atomicchat.cli.serve:register",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one clear line, exit 2, no usage dump
        raise CliError(f"{self.prog}: {message}")


def gui_parser() -> argparse.ArgumentParser:
    """The desktop app's own flags (`atomicchat [--model M] ...`), parsed before Qt starts, so a typo
    gets one line and exit 2 instead of a window (or, without a display, Qt's abort)."""
    p = _Parser(prog="atomicchat", description="Atomic Chat desktop app; `atomicchat --help-commands` lists the "
                "headless commands.")
    p.add_argument("--model", help="target GGUF to load instead of the saved choice")
    p.add_argument("--draft", help="DFlash draft GGUF to pair with --model")
    p.add_argument("--verbose", action="store_true", help="log to stderr")
    p.add_argument("--quit-after", type=float, default=0.0, help=argparse.SUPPRESS)  # smoke tests: seconds
    # tests and scripts/screenshots.py: save the screen's picture of the window once the model is ready, then quit
    p.add_argument("--screenshot", help=argparse.SUPPRESS)
    return p


def parse_gui_args(argv: list[str]) -> argparse.Namespace:
    """Raises CliError for an unknown command or flag (with a suggestion for near misses)."""
    if argv and not argv[0].startswith("-"):
        import difflib

        close = difflib.get_close_matches(argv[0], list(COMMANDS), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise CliError(f"atomicchat: unknown command '{argv[0]}'{hint}; commands: {', '.join(COMMANDS)}")
    return gui_parser().parse_args(argv)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = _Parser(prog="atomicchat", description="Atomic Chat headless commands.")
    parser.add_argument("--version", action="version", version=f"atomicchat {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    for name, target in COMMANDS.items():
        if only is not None and name != only:
            continue
        module_name, func_name = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue  # command not available in this build
            raise
        register: Callable[[argparse._SubParsersAction], None] = getattr(module, func_name)
        register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] == "--self-test":
        args_list[0] = "self-test"
    only = args_list[0] if args_list and args_list[0] in COMMANDS else None
    try:
        parser = build_parser(only)
        args = parser.parse_args(args_list)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # engine/model errors carry a user-facing message
        from atomicchat.engine.errors import EngineError

        if isinstance(exc, EngineError):
            print(f"error: {exc}", file=sys.stderr)
            return 1
        raise
