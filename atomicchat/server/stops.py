"""Stop strings over streamed text: emit what can no longer be the start of a stop string."""

from __future__ import annotations


def partial_tail(text: str, tag: str) -> int:
    """Length of the longest tail of `text` that is a proper prefix of `tag`: what must be held back
    because the next piece may complete the tag."""
    return next((n for n in range(min(len(tag) - 1, len(text)), 0, -1) if text.endswith(tag[:n])), 0)


class StopMatcher:
    """Feed text pieces; get back the text that is safe to send. A stop string found ends the reply
    just before it; text that might be the beginning of one is held back until it is decided."""

    def __init__(self, stops: tuple[str, ...]) -> None:
        self.stops = stops
        self._held = ""
        self.hit = False

    def feed(self, piece: str) -> str:
        if self.hit:
            return ""
        if not self.stops:
            return piece
        text = self._held + piece
        cut = min((i for i in (text.find(s) for s in self.stops) if i >= 0), default=-1)
        if cut >= 0:
            self.hit, self._held = True, ""
            return text[:cut]
        keep = max(partial_tail(text, s) for s in self.stops)
        self._held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        out, self._held = ("" if self.hit else self._held), ""
        return out
