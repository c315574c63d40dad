"""Text files attached to a message: what is refused and why, and the blocks written into the message."""

from __future__ import annotations

import pytest

from atomicchat.attachments import MAX_BYTES, Attachment, AttachmentError, compose, read, split


def test_text_files_are_read_as_the_model_should_see_them(tmp_path):
    f = tmp_path / "notes.md"
    f.write_bytes("\ufeff# Plan\r\n\r\n- one\r\n- two\r\n\r\n".encode())
    a = read(f)
    assert a == Attachment("notes.md", "# Plan\n\n- one\n- two")  # BOM, CRLF and trailing blank lines gone
    assert a.lines == 4 and a.label() == "notes.md · 4 lines" and a.tokens_estimate > 0
    odd = tmp_path / 'say "hi".py'
    odd.write_text("print('hi')\n")
    assert read(odd).name == "say 'hi'.py"  # a name that cannot break the block it goes in


@pytest.mark.parametrize(("content", "words"), [
    (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "not a text file"),
    ("caf\u00e9".encode("latin-1"), "not UTF-8"),
    (b"  \n\n", "is empty"),
])
def test_what_is_not_text_is_refused_in_a_sentence(tmp_path, content, words):
    f = tmp_path / "x.bin"
    f.write_bytes(content)
    with pytest.raises(AttachmentError, match=words):
        read(f)


def test_too_big_for_a_message_or_for_the_context(tmp_path):
    big = tmp_path / "big.log"
    with big.open("wb") as out:
        out.truncate(MAX_BYTES + 1)
    with pytest.raises(AttachmentError, match="up to 1 MB"):
        read(big)
    doc = tmp_path / "doc.txt"
    doc.write_text("word " * 4000)  # ~5,700 tokens by the estimate
    with pytest.raises(AttachmentError, match="context holds 4,096") as e:
        read(doc, n_ctx=4096)
    assert "raise the context size" in str(e.value)
    assert read(doc, n_ctx=32768).name == "doc.txt"
    with pytest.raises(AttachmentError, match="could not be read"):
        read(tmp_path / "gone.txt")


def test_blocks_round_trip_and_typed_text_is_left_alone():
    a, b = Attachment("a.py", "def f():\n    return 1"), Attachment("b.md", 'a line with <file name="x"> in it')
    for typed in ("Explain these", "two\nlines", ""):
        content = compose(typed, [a, b])
        assert content.endswith("</file>") and '<file name="a.py">\ndef f():' in content
        assert split(content) == (typed, [a, b])
    assert compose("just text ", []) == "just text" and split("just text") == ("just text", [])
    middle = 'before\n\n<file name="x">\nbody\n</file>\n\nafter'  # not at the end: typed, not attached
    assert split(middle) == (middle, [])
