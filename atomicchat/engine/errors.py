"""Typed engine errors. Each message is a sentence a user can act on; none aborts the process."""

from __future__ import annotations


class EngineError(Exception):
    """Base class: `str(exc)` is shown to the user as is."""


class ModelFileError(EngineError):
    """The file is missing, unreadable or not a GGUF model."""


class DraftMismatchError(EngineError):
    """The draft cannot be paired with this target (architecture, width, vocabulary, layers)."""


class UnsupportedDraftError(EngineError):
    """A draft variant this version does not run yet (DFlash2, DSpark)."""


class ModelLoadError(EngineError):
    """llama.cpp refused to load the model or to create a context for it."""


class MissingSymbolError(EngineError):
    """The installed libllama lacks a DFlash entry point this engine needs."""


class PromptRefused(EngineError):
    """The request cannot become a prompt for this model (its chat template refused the conversation,
    or it has no place for the tools a client sent): the caller's input is at fault, not the engine."""


def wire_name(exc: BaseException) -> str:
    """The name of `exc`'s nearest class defined in this module (so the engine process can send a
    subclass from elsewhere, such as chat.TemplateRefusal, as a type the parent knows), else its own."""
    for cls in type(exc).__mro__:
        if globals().get(cls.__name__) is cls:
            return cls.__name__
    return type(exc).__name__


class ContextFullError(EngineError):
    """The prompt does not fit into the context window."""


class DecodeError(EngineError):
    """llama.cpp failed while evaluating a batch."""


def check_decode(rc: int, what: str) -> None:
    """Raise a DecodeError for a non-zero llama_decode result; `what` completes "failed while …"."""
    if rc != 0:
        hint = " (the context is full)" if rc == 1 else ""
        raise DecodeError(f"llama.cpp failed while {what} (code {rc}){hint}.")
