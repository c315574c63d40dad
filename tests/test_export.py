import json
from pathlib import Path

from atomicchat.export import format_for, suggested_name, write_export
from atomicchat.store.records import Conversation, Message, ReplyStats


def _chat():
    conv = Conversation(1, "Write add() · 14:05", 1_700_000_000.0, 1_700_000_100.0)
    stats = ReplyStats(n_generated=12, n_drafted=10, n_accepted=7, used_draft=True, target_name="demo-target")
    msgs = [
        Message(1, 1, 0, "user", "Write add()", created_at=1_700_000_000.0),
        Message(2, 1, 1, "assistant", "```python\ndef add(a, b):\n    return a + b\n```", stats=stats),
    ]
    return conv, msgs


def test_markdown_export_reads_as_the_chat(tmp_path):
    conv, msgs = _chat()
    path = write_export(tmp_path / "chat.md", conv, msgs)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Write add() · 14:05\n")
    assert "## You\n\nWrite add()" in text
    assert "## Assistant · demo-target\n\n```python\ndef add(a, b):\n    return a + b\n```" in text
    assert "> 12 tokens, DFlash acceptance 70%" in text


def test_json_export_keeps_everything(tmp_path):
    conv, msgs = _chat()
    path = write_export(tmp_path / "chat.json", conv, msgs)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["conversation"]["title"] == conv.title
    assert [m["role"] for m in data["messages"]] == ["user", "assistant"]
    assert data["messages"][1]["content"] == msgs[1].content
    assert data["messages"][1]["stats"]["n_accepted"] == 7
    assert list(tmp_path.iterdir()) == [path]  # no temp file left behind


def test_names_and_formats():
    conv, _ = _chat()
    assert suggested_name(conv, "json") == "Write-add-14-05.json"
    assert format_for(Path("x.JSON")) == "json" and format_for(Path("x.md")) == "markdown"
