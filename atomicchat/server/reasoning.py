"""A reply's reasoning apart from its answer, as llama-server returns them (`reasoning_content`).

A thinking model writes `<think>reasoning</think>answer`; when the chat template already opened the
block at the end of the prompt (Qwen3.5 with thinking on), the reply starts inside it. The splitter
works on streamed text and trims the whitespace around the reasoning and before the answer, holding
only what could still be part of a tag or of that whitespace.
"""

from __future__ import annotations

from atomicchat.engine.chat import THINK_CLOSE, THINK_OPEN
from atomicchat.server.stops import partial_tail


class ReasoningSplitter:
    """`feed(piece)` -> (reasoning, content) safe to send now; `finish()` -> the rest of both."""

    def __init__(self, opened: bool) -> None:
        self._state = "reasoning" if opened else "start"  # start -> reasoning -> answer, or start -> content
        self._held = ""
        self._reasoned = False  # some reasoning was sent: later whitespace inside it is kept
        self._answered = False  # some of the answer was sent: its whitespace is kept from there on

    def feed(self, piece: str) -> tuple[str, str]:
        text, self._held = self._held + piece, ""
        if self._state == "start":
            lead = text.lstrip()
            if lead.startswith(THINK_OPEN):
                self._state, text = "reasoning", lead[len(THINK_OPEN) :]
            elif THINK_OPEN.startswith(lead):  # nothing yet, or the start of "<think>"
                self._held = text
                return "", ""
            else:
                self._state = "content"
        if self._state == "reasoning":
            at = text.find(THINK_CLOSE)
            if at >= 0:
                self._state = "answer"
                return self._reasoning(text[:at].rstrip()), self._answer(text[at + len(THINK_CLOSE) :])
            keep = partial_tail(text, THINK_CLOSE)
            body = text[: len(text) - keep]
            send = body.rstrip()  # trailing whitespace waits: it may end the reasoning
            self._held = text[len(send) :]
            return self._reasoning(send), ""
        if self._state == "answer":
            return "", self._answer(text)
        return "", text

    def _reasoning(self, text: str) -> str:
        if not self._reasoned:
            text = text.lstrip()
        self._reasoned = self._reasoned or bool(text)
        return text

    def _answer(self, text: str) -> str:
        """The answer after </think>: its leading whitespace dropped, held while there is only that."""
        if not self._answered:
            if not text.strip():
                self._held = text
                return ""
            self._answered = True
            return text.lstrip()
        return text

    def finish(self) -> tuple[str, str]:
        held, self._held = self._held, ""
        if self._state == "reasoning":  # cut off while reasoning
            return self._reasoning(held.rstrip()), ""
        if self._state == "answer":
            return "", ""
        return "", held
