"""Chat titles that tell chats apart, and the short relative times the chat list shows. No Qt.

A title is the first words of the first message plus the time it was sent ("Write a function
that… · 14:05"), made unique among the existing titles, so the list never shows two "New chat".
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta

TITLE_WORDS = 5
TITLE_CHARS = 36
FALLBACK = "Chat"


def first_words(text: str, words: int = TITLE_WORDS, chars: int = TITLE_CHARS) -> str:
    """The first line's first few words, with "…" when something was cut."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    parts = line.split()
    if not parts:
        return FALLBACK
    out = " ".join(parts[:words])
    cut = len(parts) > words
    if len(out) > chars:
        out = out[:chars].rsplit(" ", 1)[0] if " " in out[:chars] else out[:chars]
        cut = True
    out = out.rstrip(" ,.;:")
    return out + "…" if cut else out


def chat_title(text: str, when: datetime, taken: Collection[str] = ()) -> str:
    """`first_words(text) · HH:MM`, with " (2)", " (3)"… when that title is already in `taken`."""
    base = f"{first_words(text)} · {when:%H:%M}"
    title, n = base, 2
    while title in taken:
        title = f"{base} ({n})"
        n += 1
    return title


def relative_time(ts: float, now: float | None = None) -> str:
    """"14:05" today, "Yesterday", "3 Dec" this year (and in the last 300 days), else "3 Dec 2024"."""
    when = datetime.fromtimestamp(ts)
    today = datetime.fromtimestamp(now) if now is not None else datetime.now()
    if when.date() == today.date():
        return f"{when:%H:%M}"
    if when.date() == (today - timedelta(days=1)).date():
        return "Yesterday"
    day = f"{when.day} {when:%b}"
    if when.year == today.year or (today - when).days < 300:
        return day
    return f"{day} {when.year}"
