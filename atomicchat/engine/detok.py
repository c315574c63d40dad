"""Incremental detokenizer: token pieces are bytes, and one character may span several tokens."""

from __future__ import annotations

import codecs
from collections.abc import Callable


class Detokenizer:
    def __init__(self, piece: Callable[[int], bytes]) -> None:
        self._piece = piece
        self._dec = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, tokens: list[int]) -> str:
        return "".join(self._dec.decode(self._piece(t)) for t in tokens)

    def flush(self) -> str:
        return self._dec.decode(b"", final=True)
