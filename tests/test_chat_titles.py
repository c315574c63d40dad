from datetime import datetime

from atomicchat.chat_titles import chat_title, first_words, relative_time


def test_first_words_cut_with_an_ellipsis():
    assert first_words("Write a function that reads a file\nand more") == "Write a function that reads…"
    assert first_words("  \n  hi there ") == "hi there"
    assert first_words("   ") == "Chat"
    assert first_words("x" * 80).endswith("…") and len(first_words("x" * 80)) <= 37


def test_titles_carry_the_time_and_never_repeat():
    when = datetime(2026, 12, 2, 14, 5)
    t1 = chat_title("Write a function that reads a file", when)
    assert t1 == "Write a function that reads… · 14:05"
    t2 = chat_title("Write a function that reads a file", when, taken={t1})
    t3 = chat_title("Write a function that reads a file", when, taken={t1, t2})
    assert len({t1, t2, t3}) == 3 and t2.endswith("(2)") and t3.endswith("(3)")


def test_relative_times():
    now = datetime(2026, 12, 2, 15, 0).timestamp()
    assert relative_time(datetime(2026, 12, 2, 14, 5).timestamp(), now) == "14:05"
    assert relative_time(datetime(2026, 12, 1, 23, 59).timestamp(), now) == "Yesterday"
    assert relative_time(datetime(2026, 3, 3, 9, 0).timestamp(), now) == "3 Mar"
    assert relative_time(datetime(2024, 12, 3, 9, 0).timestamp(), now) == "3 Dec 2024"
