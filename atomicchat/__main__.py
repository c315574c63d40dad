"""Entry point: `atomicchat` starts the desktop app; `atomicchat <command>` runs a headless command."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    from atomicchat import cli

    if args and (args[0] in cli.COMMANDS or args[0] in ("-h", "--help", "--version", "--self-test")):
        return cli.main(args)
    from atomicchat.ui.app import run_app

    return run_app(args)


if __name__ == "__main__":
    sys.exit(main())
