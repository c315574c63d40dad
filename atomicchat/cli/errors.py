"""The one error a headless command raises for bad input (imported by every command module)."""

from __future__ import annotations


class CliError(Exception):
    """A user-facing failure: printed as one line, exit code `code`."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code
