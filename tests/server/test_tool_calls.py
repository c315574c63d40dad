"""Tool calls: the reply's <tool_call> blocks as OpenAI tool_calls, whole and streamed, and the
request fields that carry tools, tool results and earlier calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atomicchat.engine import chat
from atomicchat.engine.types import GenParams
from atomicchat.server.protocol import ApiError, parse_request
from atomicchat.server.tool_calls import ToolCallSplitter, parse_calls

QWEN35 = (Path(__file__).parents[1] / "engine" / "data" / "Qwen3.5-4B.jinja").read_text(encoding="utf-8")
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}, "zip": {"type": "string"},
        "options": {"type": "object"}, "hourly": {"type": "boolean"}}, "required": ["city"]}}}
TOOLS = (WEATHER,)
ARGS = {"city": "Paris", "days": 3, "zip": "75001", "options": {"unit": "C", "hours": [6, 12]}, "hourly": False}


def _split(text: str, size: int) -> tuple[str, list]:
    s = ToolCallSplitter(TOOLS)
    sent = "".join(s.feed(text[i : i + size]) for i in range(0, len(text), size))
    rest, calls = s.finish()
    return sent + rest, calls


def _qwen_reply(content: str, calls: list[dict]) -> str:
    """What Qwen3.5 writes for an assistant turn with these calls: the template's own rendering of one."""
    msgs = [{"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": content, "tool_calls": calls},
            {"role": "user", "content": "Thanks."}]
    out = chat.render(QWEN35, msgs, tools=list(TOOLS), enable_thinking=False)
    start = out.index("<|im_start|>assistant\n") + len("<|im_start|>assistant\n")
    return out[start : out.index("<|im_end|>", start)]


def test_qwen35s_own_call_format_comes_back_as_the_call_it_renders() -> None:
    call = {"id": "x", "type": "function", "function": {"name": "get_weather", "arguments": ARGS}}
    reply = _qwen_reply("Let me look that up.", [call, call])
    assert "<function=get_weather>" in reply and "<parameter=zip>\n75001\n</parameter>" in reply
    for size in (1, 2, 5, 11, len(reply)):
        content, calls = _split(reply, size)
        assert content == "Let me look that up."
        assert [c.name for c in calls] == ["get_weather", "get_weather"]
        # typed by the schema: the integer and the boolean parse, the zip code stays the string it is
        assert all(json.loads(c.arguments) == ARGS for c in calls)
        assert calls[0].id != calls[1].id and calls[0].id.startswith("call_")


def test_a_reply_that_is_only_a_call_has_no_content() -> None:
    call = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}
    content, calls = _split(_qwen_reply("", [call]), 3)
    assert content == "" and json.loads(calls[0].arguments) == {"city": "Oslo"}


def test_hermes_json_calls_as_qwen2_5_and_qwen3_write_them() -> None:
    text = ('Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome", "days": 2}}\n</tool_call>\n'
            '<tool_call>\n{"name": "get_weather", "arguments": "{\\"city\\": \\"Nice\\"}"}\n</tool_call>')
    content, calls = _split(text, 4)
    assert content == "Sure."
    assert [json.loads(c.arguments) for c in calls] == [{"city": "Rome", "days": 2}, {"city": "Nice"}]


def test_a_call_cut_off_before_its_closing_tag_still_counts_when_complete() -> None:
    content, calls = _split("<tool_call>\n<function=get_weather>\n<parameter=city>\nLima\n</parameter>\n</function>", 7)
    assert content == "" and json.loads(calls[0].arguments) == {"city": "Lima"}


@pytest.mark.parametrize("text", [
    "I would write <tool_call> like this in a sentence.",  # prose that mentions the tag
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nLi",  # cut off by max_tokens
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }\n</tool_call>",  # broken JSON
    "Text\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>\nand text after it",
])
def test_text_that_is_not_a_clean_call_comes_back_whole(text: str) -> None:
    for size in (1, 3, len(text)):
        assert _split(text, size) == (text, [])


def test_plain_replies_pass_unchanged_and_only_a_possible_tag_is_held() -> None:
    s = ToolCallSplitter(TOOLS)
    assert s.feed("Hello <tool") == "Hello"  # "<tool" could start a call; the space before it waits too
    assert s.feed("box> world  ") == " <toolbox> world"
    assert s.feed("\n") == ""
    assert s.finish() == ("  \n", [])
    text = "A reply with < and <tool and trailing space \n"
    assert _split(text, 2) == (text, [])
    assert parse_calls("no calls", TOOLS) is None


def _chat(**extra: object) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}], **extra}


def _parse(body: dict):  # noqa: ANN202
    return parse_request(body, chat=True, model_id="m", defaults=GenParams(max_tokens=64), n_ctx=512)


def test_tools_tool_results_and_earlier_calls_reach_the_template_as_it_expects() -> None:
    msgs = [{"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": '{"temp": 12}'}]
    r = _parse({"model": "m", "messages": msgs, "tools": [WEATHER]})
    assert r.tools == TOOLS
    assert r.messages[1] == {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}
    assert r.messages[2] == {"role": "tool", "content": '{"temp": 12}', "tool_call_id": "call_1"}
    text = chat.render(QWEN35, list(r.messages), tools=list(r.tools), enable_thinking=False)
    assert '"name": "get_weather"' in text and "<parameter=city>\nParis\n</parameter>" in text
    assert "<tool_response>\n{\"temp\": 12}\n</tool_response>" in text
    assert _parse(_chat(tools=[WEATHER], tool_choice="none")).tools is None
    assert _parse(_chat(tools=[])).tools is None and _parse(_chat()).tools is None


@pytest.mark.parametrize(("extra", "param", "words"), [
    ({"tools": [WEATHER], "tool_choice": "required"}, "tool_choice", "cannot force"),
    ({"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
     "tool_choice", "cannot force"),
    ({"tools": [{"type": "function"}]}, "tools", "tools[0]"),
    ({"tools": "get_weather"}, "tools", "list"),
    ({"response_format": {"type": "json_object"}}, "response_format", "JSON"),
    ({"response_format": {"type": "json_schema", "json_schema": {}}}, "response_format", "schema"),
    ({"logprobs": True}, "logprobs", "not supported"),
])
def test_what_cannot_be_honoured_is_refused_in_a_sentence(extra: dict, param: str, words: str) -> None:
    with pytest.raises(ApiError) as e:
        _parse(_chat(**extra))
    assert e.value.status == 400 and e.value.param == param and words in e.value.message


@pytest.mark.parametrize("args", ['{"city": ', '"Paris"', "[1]"])
def test_an_earlier_call_with_arguments_that_are_not_a_json_object_is_refused(args: str) -> None:
    msgs = [{"role": "user", "content": "x"},
            {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": args}}]}]
    with pytest.raises(ApiError) as e:
        _parse({"model": "m", "messages": msgs})
    assert e.value.status == 400 and "arguments" in e.value.message


def test_accepted_fields_that_ask_for_nothing_special() -> None:
    r = _parse(_chat(response_format={"type": "text"}, logprobs=False, parallel_tool_calls=True))
    assert r.tools is None


def test_a_last_assistant_message_without_calls_is_a_prefill() -> None:
    user = {"role": "user", "content": "Give JSON"}
    r = _parse({"model": "m", "messages": [user, {"role": "assistant", "content": "{\"name\": "}]})
    assert r.messages == (user,) and r.prefill == '{"name": '
    call = {"role": "assistant", "content": None,
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    r = _parse({"model": "m", "messages": [user, call], "tools": [WEATHER]})
    assert r.prefill == "" and r.messages[-1]["role"] == "assistant"  # calls wait for their results
    assert _parse({"model": "m", "messages": [{"role": "assistant", "content": "hi"}]}).prefill == ""
    assert _parse(_chat()).prefill == ""
