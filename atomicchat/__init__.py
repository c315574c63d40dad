"""Atomic Chat: a fast, private, fully offline desktop chat with DFlash speculative decoding."""

__version__ = "0.1.0"
APP_NAME = "Atomic Chat"
APP_ID = "atomicchat"
