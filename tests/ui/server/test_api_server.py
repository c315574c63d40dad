"""Settings ▸ Local server in the running app: one engine for the chat and the API, queued in turn."""

from __future__ import annotations

import socket
import threading
from dataclasses import replace

import openai
import pytest

from atomicchat import demo
from atomicchat.engine import Engine, EngineConfig, Finished, GenParams
from atomicchat.store.records import DONE
from tests.ui.conftest import WAIT_MS, last_widget, send

pytestmark = pytest.mark.skipif(not demo.demo_available(), reason="the bundled demo pair is missing")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_api_request_waits_for_the_streaming_chat_and_both_finish(make_window, qtbot):
    w = make_window(demo.demo_target_path(), demo.demo_draft_path())
    port = _free_port()
    # A pinned draft length (a reload): the adaptive one follows measured timings, which the app's engine
    # and the reference below never share, and the drafted counts are compared at the end.
    w.apply_settings(replace(w.settings, api_enabled=True, api_port=port, max_tokens=400, draft_max=5))
    qtbot.waitUntil(lambda: w.ready is not None and w.ready.info.draft_max == 5, timeout=WAIT_MS)
    assert w.api.listening is not None and w.api_label.text() == f"API http://127.0.0.1:{port}/v1"
    assert w.store.settings.load().api_enabled  # saved

    send(qtbot, w, "Write a long module with many functions", wait=False)
    qtbot.waitUntil(lambda: len(last_widget(w).text) > 0, timeout=WAIT_MS)
    assert w.session.busy
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", max_retries=0, timeout=120)
    model = client.models.list().data[0].id
    assert model == "demo-target.F32"
    result: dict[str, object] = {}
    msgs = [{"role": "user", "content": "Write a class for a stack"}]

    def ask() -> None:
        try:
            result["reply"] = client.chat.completions.create(model=model, messages=msgs, max_tokens=40, temperature=0)
        except Exception as exc:  # noqa: BLE001 - reported by the assert below
            result["error"] = exc

    t = threading.Thread(target=ask)
    t.start()
    qtbot.waitUntil(lambda: w.api.backend.queued == 1 or "reply" in result, timeout=WAIT_MS)
    queued_while_chat = w.session.busy and w.api.backend.queued == 1 and "reply" not in result
    qtbot.waitUntil(lambda: not w.session.busy and "reply" in result or "error" in result, timeout=3 * WAIT_MS)
    t.join(30)
    assert "error" not in result, result.get("error")
    assert queued_while_chat, "the API request ran beside the chat reply instead of waiting its turn"
    chat = w.store.chats.messages(w.session.conversation_id)[-1]
    assert chat.status == DONE and chat.content
    eng = Engine(EngineConfig(demo.demo_target_path(), demo.demo_draft_path(), n_ctx=w.ready.info.n_ctx, draft_max=5))
    try:
        ref = [ev for ev in eng.generate(eng.chat_prompt(msgs), GenParams(max_tokens=40)) if isinstance(ev, Finished)]
    finally:
        eng.close()
    reply = result["reply"]
    assert reply.choices[0].message.content == ref[0].text  # the chat's cache did not leak into it
    assert reply.model_extra["timings"]["draft_n"] == ref[0].stats.n_drafted
    qtbot.waitUntil(lambda: w.api.backend.counts["completed"] == 1 and not w.api.backend.busy, timeout=WAIT_MS)

    w.apply_settings(replace(w.settings, api_enabled=False))
    assert w.api.listening is None and not w.api_label.isVisible()
    with pytest.raises(openai.APIConnectionError):
        client.models.list()


def test_busy_port_is_a_notice_not_a_crash(make_window, qtbot):
    w = make_window(demo.demo_target_path(), demo.demo_draft_path())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        w.apply_settings(replace(w.settings, api_enabled=True, api_port=port))
    assert w.api.listening is None
    assert w.notice.kind == "error" and f"127.0.0.1:{port}" in w.notice.label.text()


def test_web_pages_are_let_in_only_when_the_setting_says_so(make_window, qtbot):
    import http.client

    from atomicchat.ui.server.server_settings import ServerSettingsGroup

    w = make_window(demo.demo_target_path(), demo.demo_draft_path())
    group = ServerSettingsGroup(replace(w.settings, api_enabled=True))
    qtbot.addWidget(group)
    assert not group.cors.isChecked()  # off by default
    group.cors.setChecked(True)
    assert "Any web page you open could use the model" in group.hint.text()  # no key set
    port = _free_port()
    w.apply_settings(replace(group.apply_to(w.settings), api_port=port))
    qtbot.waitUntil(lambda: w.api.listening is not None, timeout=WAIT_MS)
    assert w.store.settings.load().api_cors

    def preflight() -> dict[str, str]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("OPTIONS", "/v1/chat/completions", headers={
            "Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"})
        r = conn.getresponse()
        r.read()
        conn.close()
        return {k.lower(): v for k, v in r.getheaders()}

    assert preflight().get("access-control-allow-origin") == "*"
    w.apply_settings(replace(w.settings, api_cors=False))  # the server restarts without it
    qtbot.waitUntil(lambda: w.api.listening is not None, timeout=WAIT_MS)
    assert "access-control-allow-origin" not in preflight()
