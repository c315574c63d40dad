"""The local server driven by the official `openai` client: chat, streaming, completions, usage and
timings, token-exact against the in-process engine, queueing, disconnects and every error shape."""

from __future__ import annotations

import concurrent.futures
import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request

import openai
import pytest

from atomicchat.engine import Finished, GenParams
from atomicchat.server.process import ServerProcess as Served
from tests.server.conftest import API_KEY, start_server

PROMPT = "Write a function that reads a file"


def _client(s: Served, key: str = API_KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=s.base_url, api_key=key, max_retries=0, timeout=120)


def _greedy(engine, tokens: list[int], n: int) -> Finished:  # noqa: ANN001
    final = None
    for ev in engine.generate(tokens, GenParams(max_tokens=n, temperature=0.0)):
        if isinstance(ev, Finished):
            final = ev
    assert final is not None
    return final


def test_models_and_health(server: Served) -> None:
    ids = [m.id for m in _client(server).models.list()]
    assert ids == [server.model_id] == ["demo-target.F32"]
    assert _client(server).models.retrieve(server.model_id).id == server.model_id
    with pytest.raises(openai.NotFoundError) as e:
        _client(server).models.retrieve("gpt-4o")
    assert e.value.body["code"] == "model_not_found" and "demo-target.F32" in e.value.body["message"]
    health = _health(server)
    assert health["status"] == "ok" and health["busy"] is False


def test_chat_matches_engine_with_usage_and_timings(server: Served, reference) -> None:  # noqa: ANN001
    messages = [{"role": "user", "content": PROMPT}]
    resp = _client(server).chat.completions.create(model=server.model_id, messages=messages, max_tokens=48,
                                                   temperature=0)
    ref = _greedy(reference, reference.chat_prompt(messages), 48)
    assert resp.choices[0].message.content == ref.text and ref.text
    assert resp.choices[0].finish_reason == ("length" if ref.reason == "length" else "stop")
    assert resp.usage.completion_tokens == ref.stats.n_generated
    assert resp.usage.prompt_tokens == ref.stats.n_prompt
    t = resp.model_extra["timings"]
    assert t["predicted_n"] == ref.stats.n_generated and t["predicted_per_second"] > 0
    assert t["draft_n"] == ref.stats.n_drafted > 0 and t["draft_n_accepted"] == ref.stats.n_accepted
    assert t["draft_steps"] == ref.stats.n_draft_steps > 0
    assert t["plain_steps"] == ref.stats.n_steps - 1 - ref.stats.n_draft_steps
    assert t["draft_mean_length"] == round(ref.stats.n_drafted / ref.stats.n_draft_steps, 3)


def test_a_last_assistant_message_is_the_start_of_the_reply(server: Served, reference) -> None:  # noqa: ANN001
    """As llama-server takes it (prefill): the model goes on from that text in the same turn, and the
    response holds only what it wrote after it."""
    start = "def count_lines(path):\n"
    messages = [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": start}]
    resp = _client(server).chat.completions.create(model=server.model_id, messages=messages, max_tokens=32,
                                                   temperature=0)
    prompt = reference.chat_prompt(messages[:1]) + reference.tokenize(start, add_special=False)
    ref = _greedy(reference, prompt, 32)
    assert resp.choices[0].message.content == ref.text and ref.text
    assert resp.usage.prompt_tokens == len(prompt)
    assert ref.text != _greedy(reference, reference.chat_prompt(messages[:1]), 32).text  # the start mattered


def test_stream_with_usage_equals_whole(server: Served, reference) -> None:  # noqa: ANN001
    messages = [{"role": "system", "content": "You write Python."}, {"role": "user", "content": PROMPT}]
    chunks = list(_client(server).chat.completions.create(
        model=server.model_id, messages=messages, max_tokens=40, temperature=0, stream=True,
        stream_options={"include_usage": True}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    ref = _greedy(reference, reference.chat_prompt(messages), 40)
    assert text == ref.text
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 3  # really streamed
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == ref.stats.n_generated
    finals = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(finals) == 1 and finals[0].model_extra["timings"]["draft_n"] == ref.stats.n_drafted


def test_completions_match_engine(server: Served, reference) -> None:  # noqa: ANN001
    prompt = "def read_lines(path):\n"
    resp = _client(server).completions.create(model=server.model_id, prompt=prompt, max_tokens=32, temperature=0)
    ref = _greedy(reference, reference.tokenize(prompt, add_special=True), 32)
    assert resp.choices[0].text == ref.text and resp.usage.completion_tokens == ref.stats.n_generated


def test_stop_string_and_seeded_sampling(server: Served) -> None:
    c = _client(server)
    whole = c.chat.completions.create(model=server.model_id, messages=[{"role": "user", "content": PROMPT}],
                                      max_tokens=48, temperature=0).choices[0].message.content
    stop = whole[len(whole) // 2 : len(whole) // 2 + 3]
    cut = c.chat.completions.create(model=server.model_id, messages=[{"role": "user", "content": PROMPT}],
                                    max_tokens=48, temperature=0, stop=[stop])
    assert cut.choices[0].message.content == whole[: whole.index(stop)]
    assert cut.choices[0].finish_reason == "stop"
    kw = dict(model=server.model_id, messages=[{"role": "user", "content": PROMPT}], max_tokens=24,
              temperature=0.9, top_p=0.95, seed=1234)
    a, b = (c.chat.completions.create(**kw).choices[0].message.content for _ in range(2))
    assert a == b  # same seed, same reply


def test_two_clients_are_queued_and_both_complete(server: Served, reference) -> None:  # noqa: ANN001
    prompts = ["Write a function that sorts a list", "Write a class for a stack"]
    refs = [_greedy(reference, reference.chat_prompt([{"role": "user", "content": p}]), 40).text for p in prompts]

    def ask(p: str) -> str:
        r = _client(server).chat.completions.create(model=server.model_id, max_tokens=40, temperature=0,
                                                    messages=[{"role": "user", "content": p}])
        return r.choices[0].message.content

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        got = list(pool.map(ask, prompts))
    assert got == refs  # one context, one request at a time: each reply is what it is alone


def test_disconnect_mid_stream_stops_generation(server: Served) -> None:
    before = _health(server)["requests"]["cancelled"]
    body = json.dumps({"model": server.model_id, "max_tokens": 490, "temperature": 0, "stream": True,
                       "messages": [{"role": "user", "content": "Write a long module with many functions"}]})
    url = urllib.parse.urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    conn.request("POST", url.path + "/chat/completions", body=body,
                 headers={"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"})
    r = conn.getresponse()
    assert r.status == 200
    got = [r.readline() for _ in range(6)]
    assert any(g.startswith(b"data: ") for g in got)
    conn.sock.shutdown(socket.SHUT_RDWR)  # the client goes away mid-reply
    conn.close()
    # the engine must stop within a step and be free for the next request
    t0 = time.monotonic()
    while _health(server)["busy"] and time.monotonic() - t0 < 10:
        time.sleep(0.05)
    assert not _health(server)["busy"], "generation went on after the client left"
    assert _health(server)["requests"]["cancelled"] == before + 1  # stopped by the disconnect, not by EOS
    r2 = _client(server).chat.completions.create(model=server.model_id, max_tokens=8, temperature=0,
                                                 messages=[{"role": "user", "content": "hi"}])
    assert r2.choices[0].message.content is not None


def _health(s: Served) -> dict:
    with urllib.request.urlopen(s.health_url, timeout=10) as r:
        return json.load(r)


def test_error_shapes(server: Served) -> None:
    with pytest.raises(openai.AuthenticationError) as e:
        _client(server, key="wrong").models.list()
    assert e.value.status_code == 401 and e.value.body["code"] == "invalid_api_key"
    with pytest.raises(openai.NotFoundError) as e:
        _client(server).chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}])
    assert e.value.body["code"] == "model_not_found"
    with pytest.raises(openai.BadRequestError) as e:  # a 1 MB message: longer than the context
        _client(server).chat.completions.create(model=server.model_id,
                                                messages=[{"role": "user", "content": "word " * 200_000}])
    assert e.value.body["code"] == "context_length_exceeded" and "512" in e.value.body["message"]
    with pytest.raises(openai.BadRequestError) as e:
        _client(server).chat.completions.create(model=server.model_id, temperature=5,
                                                messages=[{"role": "user", "content": "x"}])
    assert e.value.body["param"] == "temperature"
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
    with pytest.raises(openai.BadRequestError) as e:  # the demo's template has no place for tools
        _client(server).chat.completions.create(model=server.model_id, tools=[tool],
                                                messages=[{"role": "user", "content": "x"}])
    assert e.value.body["param"] == "tools" and "no place for tools" in e.value.body["message"]
    assert _health(server)["busy"] is False  # and the server goes on
    req = urllib.request.Request(server.base_url + "/chat/completions", data=b"{not json",
                                 headers={"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as he:
        urllib.request.urlopen(req, timeout=10)
    assert he.value.code == 400 and json.load(he.value)["error"]["code"] == "invalid_json"
    for method, path, status in (("POST", "/embeddings", 404), ("GET", "/chat/completions", 405)):
        req = urllib.request.Request(server.base_url + path, method=method, data=b"{}" if method == "POST" else None,
                                     headers={"Authorization": f"Bearer {API_KEY}"})
        with pytest.raises(urllib.error.HTTPError) as he:
            urllib.request.urlopen(req, timeout=10)
        error = json.load(he.value)["error"]
        assert he.value.code == status and set(error) == {"message", "type", "param", "code"}
        assert "POST /v1/chat/completions" in error["message"] and path in error["message"]
    url = urllib.parse.urlsplit(server.base_url)  # a 5 MiB upload is refused from its header, before reading it
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.putrequest("POST", url.path + "/completions")
    for k, v in (("Authorization", f"Bearer {API_KEY}"), ("Content-Type", "application/json"),
                 ("Content-Length", str(5 * 1024 * 1024))):
        conn.putheader(k, v)
    conn.endheaders()
    r = conn.getresponse()
    assert r.status == 413 and json.load(r)["error"]["code"] == "request_too_large"
    conn.close()


def test_cli_refuses_bad_flags_and_busy_port(tmp_path) -> None:  # noqa: ANN001
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "atomicchat", "serve", "--port", "70000"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.strip() == "error: --port must be between 0 and 65535"
    with start_server(tmp_path / "a") as first:
        port = first.base_url.rsplit(":", 1)[1].split("/")[0]
        r = subprocess.run([sys.executable, "-m", "atomicchat", "serve", "--port", port, "--threads", "1"],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and "could not listen on 127.0.0.1:" + port in r.stderr
        assert "Traceback" not in r.stderr
