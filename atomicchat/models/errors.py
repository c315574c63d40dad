"""Typed errors of the model manager. `str(exc)` is a sentence the user can act on, shown as is.

The GUI catches `ModelsError`; the CLI prints it as one line. Hub library exceptions never reach
callers: `atomicchat.models.hub.translate_error` turns them into one of these.
"""

from __future__ import annotations


class ModelsError(Exception):
    """Base class of every user-facing model-manager failure."""


class CatalogError(ModelsError):
    """The catalog file is missing, malformed, or does not name the requested pair or quant."""


class OfflineError(ModelsError):
    """The Hub cannot be reached (no connection, or offline mode is on) and the file is not on disk."""


class NotFoundError(ModelsError):
    """The repository, revision or file does not exist on the Hub (or is private)."""


class GatedError(ModelsError):
    """The repository is gated: the user must accept its licence on the Hub and use a token."""


class AuthError(ModelsError):
    """The Hub refused the token (invalid, expired, or without read access)."""


class HubError(ModelsError):
    """Any other Hub failure (server error, rate limit, unexpected response)."""


class NotEnoughDiskError(ModelsError):
    """Free disk space is below what the download still needs; checked before any byte is fetched."""


class DiskFullError(ModelsError):
    """The disk filled up during the transfer; the partial file is kept so the pull can resume."""


class ChecksumMismatchError(ModelsError):
    """The finished file's sha256 differs from the expected one; the bad file has been deleted."""


class CatalogOutdatedError(ModelsError):
    """The Hub now serves a different file than the catalog pins (its sha256 changed)."""


class DownloadCancelled(ModelsError):
    """The user cancelled; partial data stays on disk and the next pull resumes it."""


class BusyError(ModelsError):
    """Another process is downloading the same file right now."""


class RegistryError(ModelsError):
    """The installed-model registry cannot be read or written, or has no such entry."""


class FileAccessError(ModelsError):
    """A model file or the registry could not be read or written (permissions, a vanished disk)."""


class InvalidModelError(ModelsError):
    """The file is not a model Atomic Chat can run (the engine's validation refused it)."""


class UnexpectedError(ModelsError):
    """Anything else that went wrong; the sentence names it, the cause is kept for the log."""


def as_models_error(exc: BaseException) -> ModelsError:
    """The one translation of a failure into this package's errors (its sentence is for the user)."""
    if isinstance(exc, ModelsError):
        return exc
    from atomicchat.engine.errors import EngineError

    if isinstance(exc, EngineError):
        out: ModelsError = InvalidModelError(str(exc))
    elif isinstance(exc, OSError):
        out = FileAccessError(f"A file could not be read or written: {exc.strerror or exc} ({exc.filename or ''}).")
    else:
        out = UnexpectedError(f"Something went wrong ({type(exc).__name__}: {exc}).")
    out.__cause__ = exc
    return out
