"""The loop guard: a reply that repeats one block is caught once the loop is long enough, ordinary
text with repeated parts is not (engine/repetition.py)."""

from __future__ import annotations

import random

from atomicchat.engine.repetition import MIN_REPEATS, MIN_SPAN, LoopGuard


def test_a_short_line_repeated_is_caught_once_the_loop_covers_min_span_tokens():
    line = list(range(100, 112))  # a 12-token line, as `line.strip().startswith('#') and` was
    text = list(range(40)) + line * 30
    guard = LoopGuard()
    j = guard.feed_all(text)
    assert guard.period == 12 and j == 40 + MIN_SPAN - 1  # the first copy and 116 tokens repeating it
    assert guard.feed(7)  # and it stays tripped


def test_a_paragraph_is_caught_after_four_copies_even_when_it_repeats_a_sentence_inside():
    """SmolLM2's essay: a ~73-token paragraph whose second sentence comes twice in it, then the whole
    paragraph again and again. The n-grams of that sentence last occurred within the paragraph (a
    short distance that breaks at the next paragraph); the paragraph's own period must still win."""
    sentence, other = list(range(200, 224)), list(range(300, 325))
    para = other + sentence + sentence + [9]  # 74 tokens
    guard = LoopGuard()
    j = guard.feed_all(list(range(20)) + para * 6)
    assert guard.period == len(para)
    assert j == 20 + MIN_REPEATS * len(para) - 1  # tripped at the last token of the fourth copy


def test_ordinary_text_with_repeated_parts_is_left_alone():
    rng = random.Random(3)
    prose = [rng.randrange(5000) for _ in range(3000)]
    assert LoopGuard().feed_all(prose) is None
    # a JSON list of objects that differ in one field: the block never repeats exactly
    rows = [tok for i in range(60) for tok in (11, 12, 13, 1000 + i, 14, 15, 16, 17, 18, 19)]
    assert LoopGuard().feed_all(rows) is None
    # a line written three times in a row (a refrain, a test's repeated assert), however long
    line = list(range(400, 460))
    assert LoopGuard().feed_all(list(range(10)) + line * 3 + list(range(500, 600))) is None
    # four copies of a short line: a loop by count, but too short to be worth stopping a reply for
    assert LoopGuard().feed_all(list(range(10)) + list(range(700, 710)) * 4 + list(range(800, 900))) is None

