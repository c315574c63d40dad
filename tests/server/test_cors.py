"""Browser access (CORS) to the local API: off unless asked for, then preflights and replies carry
the headers a browser needs, and the API key still guards every /v1 route."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from contextlib import contextmanager

from atomicchat.server.app import ServerConfig, create_app
from atomicchat.server.thread import ServerThread

ORIGIN = "http://localhost:3000"


class IdleBackend:
    model_id, n_ctx, busy, queued, counts = "m", 512, False, 0, {"completed": 0, "cancelled": 0, "failed": 0}

    def submit(self, job) -> None:  # noqa: ANN001 - no request in these tests reaches a job
        raise AssertionError("no job expected")


@contextmanager
def _served(config: ServerConfig) -> Iterator[int]:
    thread = ServerThread(create_app(IdleBackend(), config), "127.0.0.1", 0)
    where = thread.start()
    try:
        yield where.port
    finally:
        thread.stop()


def _request(port: int, method: str, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path, headers=headers)
    r = conn.getresponse()
    out = (r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    conn.close()
    return out


PREFLIGHT = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST",
             "Access-Control-Request-Headers": "authorization, content-type, x-stainless-os"}


def test_browsers_get_no_access_by_default() -> None:
    with _served(ServerConfig(api_key="k")) as port:
        status, headers, body = _request(port, "OPTIONS", "/v1/chat/completions", PREFLIGHT)
        assert status == 405 and "access-control-allow-origin" not in headers
        assert json.loads(body)["error"]["code"] == "method_not_allowed"
        status, headers, _ = _request(port, "GET", "/v1/models", {"Origin": ORIGIN, "Authorization": "Bearer k"})
        assert status == 200 and "access-control-allow-origin" not in headers  # the browser withholds it


def test_allowed_origins_pass_preflight_and_the_key_still_counts() -> None:
    with _served(ServerConfig(api_key="k", cors_origins=("*",))) as port:
        status, headers, _ = _request(port, "OPTIONS", "/v1/chat/completions", PREFLIGHT)
        assert status == 200 and headers["access-control-allow-origin"] == "*"
        assert "POST" in headers["access-control-allow-methods"]
        assert "x-stainless-os" in headers["access-control-allow-headers"]  # the OpenAI JS client's own headers
        status, headers, body = _request(port, "GET", "/v1/models", {"Origin": ORIGIN})
        assert status == 401 and headers["access-control-allow-origin"] == "*"  # readable: "set your key"
        status, headers, body = _request(port, "GET", "/v1/models", {"Origin": ORIGIN, "Authorization": "Bearer k"})
        assert status == 200 and json.loads(body)["data"][0]["id"] == "m"
    with _served(ServerConfig(cors_origins=(ORIGIN,))) as port:
        assert _request(port, "OPTIONS", "/v1/models", {**PREFLIGHT, "Access-Control-Request-Method": "GET"})[1][
            "access-control-allow-origin"] == ORIGIN
        status, headers, _ = _request(port, "OPTIONS", "/v1/models", {**PREFLIGHT, "Origin": "https://evil.example"})
        assert status == 400 and "access-control-allow-origin" not in headers
