"""Pure parts of the server: stop strings over streamed pieces, request validation, response fields."""

from __future__ import annotations

import pytest

from atomicchat.engine.types import GenParams, GenStats
from atomicchat.server.protocol import ApiError, finish_reason, parse_request, timings, usage
from atomicchat.server.stops import StopMatcher

DEFAULTS = GenParams(max_tokens=64)


def _feed(stops: tuple[str, ...], pieces: list[str]) -> tuple[str, bool]:
    m = StopMatcher(stops)
    out = "".join(m.feed(p) for p in pieces) + m.flush()
    return out, m.hit


@pytest.mark.parametrize(
    ("pieces", "expected", "hit"),
    [
        (["Hello wor", "ld END more"], "Hello world ", True),
        (["abc E", "N", "D"], "abc ", True),  # split across three pieces
        (["abc E", "NX"], "abc ENX", False),  # a false start is released
        (["x", "E"], "xE", False),  # held tail flushed at the end
        (["no stop here"], "no stop here", False),
    ],
)
def test_stop_matcher(pieces: list[str], expected: str, hit: bool) -> None:
    assert _feed(("END",), pieces) == (expected, hit)


def test_stop_matcher_earliest_of_several_and_after_hit() -> None:
    m = StopMatcher(("\n\n", "B"))
    assert m.feed("aaB\n\nc") == "aa"
    assert m.hit and m.feed("more") == "" and m.flush() == ""


def test_stop_matcher_holds_only_a_possible_prefix() -> None:
    m = StopMatcher(("<end>",))
    assert m.feed("a <e") == "a "  # "<e" could start "<end>"
    assert m.feed("x") == "<ex"


def _chat(**extra: object) -> dict[str, object]:
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}], **extra}


def test_parse_chat_defaults_and_overrides() -> None:
    r = parse_request(_chat(), chat=True, model_id="m", defaults=DEFAULTS, n_ctx=512)
    assert r.messages == ({"role": "user", "content": "hi"},)
    assert r.sampling.gen_params() == GenParams(max_tokens=64, seed=None)
    r = parse_request(_chat(temperature=0.5, top_p=0.8, top_k=20, min_p=0.0, seed=7, max_tokens=9, stop="x",
                            stream=True, stream_options={"include_usage": True},
                            chat_template_kwargs={"enable_thinking": True}),
                      chat=True, model_id="m", defaults=DEFAULTS, n_ctx=512)
    p = r.sampling.gen_params()
    assert (p.temperature, p.top_p, p.top_k, p.min_p, p.seed, p.max_tokens) == (0.5, 0.8, 20, 0.0, 7, 9)
    assert r.stop == ("x",) and r.stream and r.include_usage and r.enable_thinking is True


def test_parse_text_parts_and_developer_role() -> None:
    body = {"model": "m", "messages": [{"role": "developer", "content": [{"type": "text", "text": "be brief"}]},
                                       {"role": "user", "content": "hi"}]}
    r = parse_request(body, chat=True, model_id="m", defaults=DEFAULTS, n_ctx=512)
    assert r.messages[0] == {"role": "system", "content": "be brief"}


def test_max_tokens_clamped_to_context() -> None:
    r = parse_request(_chat(max_tokens=10**6), chat=True, model_id="m", defaults=DEFAULTS, n_ctx=512)
    assert r.sampling.max_tokens == 511


@pytest.mark.parametrize(
    ("body", "status", "param"),
    [
        ([1, 2], 400, None),
        ({"messages": [{"role": "user", "content": "x"}]}, 400, "model"),
        (_chat(model="other"), 404, "model"),
        (_chat(temperature=float("nan")), 400, "temperature"),
        (_chat(temperature=3), 400, "temperature"),
        (_chat(top_p="high"), 400, "top_p"),
        (_chat(max_tokens=0), 400, "max_tokens"),
        (_chat(seed=-1), 400, "seed"),
        (_chat(n=2), 400, "n"),
        (_chat(stop=["a"] * 5), 400, "stop"),
        ({"model": "m", "messages": []}, 400, "messages"),
        ({"model": "m", "messages": [{"role": "function", "content": "x"}]}, 400, "messages"),
        ({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, 400, "messages[0].content"),
    ],
)
def test_parse_refusals(body: object, status: int, param: str | None) -> None:
    with pytest.raises(ApiError) as e:
        parse_request(body, chat=True, model_id="m", defaults=DEFAULTS, n_ctx=512)
    assert e.value.status == status and e.value.param == param
    assert set(e.value.body()["error"]) == {"message", "type", "param", "code"}


def test_parse_completion_prompt() -> None:
    r = parse_request({"model": "m", "prompt": ["def f():"]}, chat=False, model_id="m", defaults=DEFAULTS, n_ctx=512)
    assert r.prompt == "def f():" and not r.is_chat
    with pytest.raises(ApiError):
        parse_request({"model": "m", "prompt": ""}, chat=False, model_id="m", defaults=DEFAULTS, n_ctx=512)


def test_usage_timings_finish() -> None:
    s = GenStats(n_prompt=10, n_prompt_cached=4, n_generated=20, n_drafted=30, n_accepted=12,
                 prefill_seconds=0.5, generate_seconds=2.0)
    assert usage(10, 20) == {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}
    t = timings(s)
    assert (t["prompt_n"], t["cache_n"], t["predicted_n"], t["draft_n"], t["draft_n_accepted"]) == (6, 4, 20, 30, 12)
    assert t["predicted_per_second"] == 10.0 and t["prompt_per_second"] == 12.0
    assert [finish_reason(r) for r in ("eos", "stop", "length", "context")] == ["stop", "stop", "length", "length"]


def test_server_thread_serves_and_stops_and_reports_busy_port() -> None:
    import json
    import threading
    import urllib.request

    from atomicchat.server.app import ServerConfig, create_app
    from atomicchat.server.thread import ServerThread

    class Idle:  # a backend with no engine: /health and /v1/models need none
        model_id, n_ctx, busy, queued = "m", 512, False, 0
        counts = {"completed": 0, "cancelled": 0, "failed": 0}

        def submit(self, job) -> None:  # noqa: ANN001
            raise AssertionError("no job expected")

    app = create_app(Idle(), ServerConfig())
    first = ServerThread(app, "127.0.0.1", 0)
    where = first.start()
    try:
        with urllib.request.urlopen(where.url + "/models", timeout=10) as r:
            assert json.load(r)["data"][0]["id"] == "m"
        second = ServerThread(app, "127.0.0.1", where.port)
        with pytest.raises(OSError, match="could not listen"):
            second.start(timeout=5)
    finally:
        first.stop()
    assert not [t for t in threading.enumerate() if t.name == "atomicchat-api"]
