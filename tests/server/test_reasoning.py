"""A reply's reasoning apart from its answer, over streamed pieces of every size."""

from __future__ import annotations

import pytest

from atomicchat.server.reasoning import ReasoningSplitter


def _split(text: str, opened: bool, size: int) -> tuple[str, str]:
    s = ReasoningSplitter(opened)
    thought = answer = ""
    for i in range(0, len(text), size):
        a, b = s.feed(text[i : i + size])
        thought, answer = thought + a, answer + b
    a, b = s.finish()
    return thought + a, answer + b


@pytest.mark.parametrize(("text", "opened", "expected"), [
    ("Two plus two.\n\nSo 4.\n</think>\n\nIt is 4.", True, ("Two plus two.\n\nSo 4.", "It is 4.")),
    ("\n<think>\nhmm\n</think>\n\nOK  ", False, ("hmm", "OK  ")),
    ("<think>\n\n</think>\n\nAnswer", False, ("", "Answer")),  # an empty block, as thinking-off prompts end
    ("Cut off while reasoning\n", True, ("Cut off while reasoning", "")),
    ("Reasoning</think>", True, ("Reasoning", "")),
    ("A plain reply  \n", False, ("", "A plain reply  \n")),
    ("  <thin", False, ("", "  <thin")),  # the start of a tag that never came
    ("x <think> y", False, ("", "x <think> y")),  # a tag inside an answer is text
    ("It mentions </think> later", False, ("", "It mentions </think> later")),
])
def test_reasoning_and_answer_whatever_the_pieces(text: str, opened: bool, expected: tuple[str, str]) -> None:
    for size in (1, 2, 3, 7, len(text)):
        assert _split(text, opened, size) == expected


def test_only_what_could_still_be_a_tag_or_edge_whitespace_is_held() -> None:
    s = ReasoningSplitter(True)
    assert s.feed("Step one.\n") == ("Step one.", "")
    assert s.feed("Step two.</th") == ("\nStep two.", "")
    assert s.feed("ink>\n\n") == ("", "")
    assert s.feed("Answer") == ("", "Answer")
    assert s.finish() == ("", "")
