"""Entry point: `atomicchat` starts the desktop app; `atomicchat <command>` runs a headless command."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--engine-child"]:  # the supervised engine process (atomicchat.engine.proc)
        from atomicchat.engine.proc.child import run

        return run(args[1:])
    from atomicchat import cli

    if args and (args[0] in cli.COMMANDS or args[0] in ("--help-commands", "--version", "--self-test")):
        return cli.main(["--help"] if args[0] == "--help-commands" else args)
    try:
        ns = cli.parse_gui_args(args)  # before Qt: a typo is one line, not a window or an abort
    except cli.CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    from atomicchat.platform_check import preflight

    problem = preflight()  # Qt would abort (exit 134) naming only the first missing library
    if problem:
        print(problem, file=sys.stderr)
        return 1
    from atomicchat.ui.app import run_app

    return run_app(ns)


if __name__ == "__main__":
    sys.exit(main())
