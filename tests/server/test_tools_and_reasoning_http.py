"""Tool calls and reasoning over HTTP with the official `openai` client, whole and streamed.

The engine here is scripted: it writes the text a Qwen3.5 model writes when it calls a tool (the
format its chat template teaches; `test_tool_calls.py` checks it against the template itself) or
thinks. No model that the tests can run offline calls tools or thinks, so this checks the server's
side only: what reaches the template, and what the client gets back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import openai
import pytest

from atomicchat.engine.types import Finished, GenParams, GenStats, Step
from atomicchat.server.app import ServerConfig, create_app
from atomicchat.server.backend import EngineBackend
from atomicchat.server.thread import ServerThread

MODEL = "scripted-qwen3.5"
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
                                            "parameters": {"type": "object", "properties": {
                                                "city": {"type": "string"}, "days": {"type": "integer"}}}}}
CALL = ("I'll check the forecast.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nSão Paulo\n</parameter>\n"
        "<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>")


class ScriptedEngine:
    """Replies with the next of `replies`, three characters a step; records what chat_prompt got."""

    n_ctx = 4096

    def __init__(self, replies: list[str], prompt_end: str = "<|im_start|>assistant\n") -> None:
        self.replies = replies
        self.prompt_end = prompt_end  # what the prompt's last tokens read as (a template may open <think>)
        self.prompts: list[dict] = []

    def detokenize(self, tokens: list[int]) -> str:
        return self.prompt_end

    def tokenize(self, text: str, add_special: bool = True) -> list[int]:
        return [1, 2, 3]

    def chat_prompt(self, messages: list[dict], enable_thinking: bool | None = None,
                    tools: list[dict] | None = None) -> list[int]:
        self.prompts.append({"messages": messages, "tools": tools})
        return [1, 2, 3]

    def generate(self, tokens: list[int], params: GenParams, should_stop=lambda: False) -> Iterator[Step | Finished]:  # noqa: ANN001
        text = self.replies[(len(self.prompts) - 1) % len(self.replies)]
        stats = GenStats(n_prompt=len(tokens))
        for i in range(0, len(text), 3):
            stats.n_generated += 1
            stats.n_steps += 1
            stats.generate_seconds = 0.001 * stats.n_generated
            yield Step([i], text[i : i + 3], [False], 0, 0, GenStats(**vars(stats)))
        yield Finished("eos", stats, text=text)


@contextmanager
def _serve(engine: ScriptedEngine) -> Iterator[openai.OpenAI]:
    backend = EngineBackend(engine, MODEL)
    thread = ServerThread(create_app(backend, ServerConfig()), "127.0.0.1", 0)
    where = thread.start()
    try:
        yield openai.OpenAI(base_url=where.url, api_key="x", max_retries=0, timeout=30)
    finally:
        thread.stop()
        backend.close()


@pytest.fixture()
def served() -> Iterator[tuple[openai.OpenAI, ScriptedEngine]]:
    engine = ScriptedEngine([CALL])
    with _serve(engine) as client:
        yield client, engine


def _streamed(stream) -> tuple[str, str, dict, list]:  # noqa: ANN001
    """What a client puts together from a stream: reasoning, content, calls by index, finish reasons."""
    thought, content, calls, reasons = "", "", {}, []
    for chunk in stream:
        if not chunk.choices:
            continue
        d = chunk.choices[0].delta
        thought += (d.model_extra or {}).get("reasoning_content") or ""
        content += d.content or ""
        for tc in d.tool_calls or []:
            c = calls.setdefault(tc.index, {"name": "", "arguments": ""})
            c["name"] += tc.function.name or ""
            c["arguments"] += tc.function.arguments or ""
        reasons.append(chunk.choices[0].finish_reason)
    return thought, content, calls, [x for x in reasons if x]


def _ask(client: openai.OpenAI, **kw):  # noqa: ANN202
    return client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "Weather in São Paulo?"}],
                                          tools=[WEATHER], **kw)


def test_a_call_comes_back_as_tool_calls_whole_and_streamed(served) -> None:  # noqa: ANN001
    client, engine = served
    r = _ask(client)
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content == "I'll check the forecast."
    (call,) = choice.message.tool_calls
    assert call.type == "function" and call.function.name == "get_weather" and call.id.startswith("call_")
    assert json.loads(call.function.arguments) == {"city": "São Paulo", "days": 2}
    assert engine.prompts[-1]["tools"] == [WEATHER]

    thought, content, calls, reasons = _streamed(_ask(client, stream=True))
    assert content == "I'll check the forecast." and "<tool_call>" not in content and thought == ""
    assert [c["name"] for c in calls.values()] == ["get_weather"]
    assert json.loads(calls[0]["arguments"]) == {"city": "São Paulo", "days": 2}
    assert reasons == ["tool_calls"]


def test_the_tool_result_goes_back_to_the_template_with_the_call(served) -> None:  # noqa: ANN001
    client, engine = served
    first = _ask(client).choices[0].message
    msgs = [{"role": "user", "content": "Weather in São Paulo?"}, first.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": '{"max": 27}'}]
    client.chat.completions.create(model=MODEL, messages=msgs, tools=[WEATHER])
    sent = engine.prompts[-1]["messages"]
    assert sent[1]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": {"city": "São Paulo", "days": 2}}
    assert sent[2] == {"role": "tool", "content": '{"max": 27}', "tool_call_id": first.tool_calls[0].id}


def test_without_tools_the_same_text_is_plain_content(served) -> None:  # noqa: ANN001
    client, engine = served
    r = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "x"}])
    assert r.choices[0].message.content == CALL and not r.choices[0].message.tool_calls
    assert r.choices[0].finish_reason == "stop" and engine.prompts[-1]["tools"] is None
    r = _ask(client, tool_choice="none")
    assert r.choices[0].message.content == CALL and engine.prompts[-1]["tools"] is None


THOUGHT = "The user wants 2 + 2.\nThat is 4.\n</think>\n\nIt is **4**."


@pytest.mark.parametrize(("prompt_end", "reply"), [
    ("<|im_start|>assistant\n<think>\n", THOUGHT),  # Qwen3.5 with thinking on: the template opened the block
    ("<|im_start|>assistant\n", "<think>\n" + THOUGHT),  # a model that opens it itself
])
def test_reasoning_comes_apart_from_the_answer(prompt_end: str, reply: str) -> None:
    with _serve(ScriptedEngine([reply], prompt_end)) as client:
        r = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "2 + 2?"}])
        m = r.choices[0].message
        assert m.content == "It is **4**." and m.model_extra["reasoning_content"] == "The user wants 2 + 2.\nThat is 4."
        stream = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "2 + 2?"}],
                                                stream=True)
        assert _streamed(stream) == ("The user wants 2 + 2.\nThat is 4.", "It is **4**.", {}, ["stop"])
        text = client.completions.create(model=MODEL, prompt="2 + 2?").choices[0].text
        assert text == reply  # completions are raw text: no chat template, nothing split


def test_a_thinking_model_that_then_calls_a_tool() -> None:
    reply = "Need the forecast.\n</think>\n\n" + CALL.split("\n\n", 1)[1]
    with _serve(ScriptedEngine([reply], "<think>\n")) as client:
        m = _ask(client).choices[0].message
        assert m.model_extra["reasoning_content"] == "Need the forecast." and m.content is None
        assert json.loads(m.tool_calls[0].function.arguments) == {"city": "São Paulo", "days": 2}
        thought, content, calls, reasons = _streamed(_ask(client, stream=True))
        assert (thought, content, reasons) == ("Need the forecast.", "", ["tool_calls"])
        assert json.loads(calls[0]["arguments"]) == {"city": "São Paulo", "days": 2}
