"""The Starlette application: OpenAI-compatible routes over a backend that runs one job at a time.

Streaming uses server-sent events (`data: {...}` lines, then `data: [DONE]`). A client that goes away
cancels its job: while it waits its turn, or mid-stream within one decode step.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from atomicchat import __version__
from atomicchat.engine.types import GenParams
from atomicchat.server.backend import Delta, Done, Event, Failed, Job, Started
from atomicchat.server.protocol import (
    MAX_BODY_BYTES,
    ApiError,
    ApiRequest,
    finish_reason,
    parse_request,
    timings,
    usage,
)
from atomicchat.server.reasoning import ReasoningSplitter
from atomicchat.server.stops import StopMatcher
from atomicchat.server.tool_calls import ToolCall, ToolCallSplitter

POLL_S = 0.25  # how often a waiting non-streaming request checks that its client is still there


class Backend(Protocol):
    """What the routes need: the model's id and context, queue state, and a FIFO `submit`."""

    model_id: str
    n_ctx: int
    busy: bool
    queued: int
    counts: dict[str, int]

    def submit(self, job: Job) -> None: ...


@dataclass(frozen=True)
class ServerConfig:
    api_key: str | None = None
    defaults: GenParams = GenParams()
    # Web pages (browser origins) allowed to call the API: none by default, as LM Studio, since a page
    # allowed here can use the model from any site the user opens; ("*",) allows every origin.
    cors_origins: tuple[str, ...] = ()


def _error(exc: ApiError) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status)


class _Stream:
    """Events of one job, delivered from the engine thread into this request's event loop."""

    def __init__(self, backend: Backend, req: ApiRequest) -> None:
        self.loop = asyncio.get_running_loop()
        self.events: asyncio.Queue[Event] = asyncio.Queue()
        self.job = Job(req, self._emit)
        backend.submit(self.job)

    def _emit(self, ev: Event) -> None:
        try:
            self.loop.call_soon_threadsafe(self.events.put_nowait, ev)
        except RuntimeError:  # the loop is gone (server shutting down): nobody is listening
            self.job.cancel.set()

    async def next(self, request: Request | None = None) -> Event:
        """The next event; with `request`, cancel the job if its client disconnects meanwhile."""
        while True:
            try:
                return await asyncio.wait_for(self.events.get(), POLL_S if request is not None else None)
            except TimeoutError:
                if request is not None and await request.is_disconnected():
                    self.job.cancel.set()
                    raise ClientDisconnect() from None


def create_app(backend: Backend, config: ServerConfig) -> Starlette:
    async def read_json(request: Request) -> Any:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            raise ApiError(413, f"The request body is larger than {MAX_BODY_BYTES // (1024 * 1024)} MiB.",
                           code="request_too_large")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise ApiError(413, f"The request body is larger than {MAX_BODY_BYTES // (1024 * 1024)} MiB.",
                               code="request_too_large")
            chunks.append(chunk)
        try:
            return json.loads(b"".join(chunks))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ApiError(400, f"The request body is not valid JSON: {exc}.", code="invalid_json") from None

    def check_key(request: Request) -> None:
        if config.api_key is None:
            return
        auth = request.headers.get("authorization", "")
        given = auth[7:] if auth.lower().startswith("bearer ") else ""
        if not hmac.compare_digest(given.encode(), config.api_key.encode()):
            raise ApiError(401, "Incorrect or missing API key. Send it as 'Authorization: Bearer <key>'.",
                           code="invalid_api_key")

    def model_object() -> dict[str, Any]:
        return {"id": backend.model_id, "object": "model", "created": 0, "owned_by": "atomicchat"}

    async def models(request: Request) -> Response:
        try:
            check_key(request)
        except ApiError as exc:
            return _error(exc)
        return JSONResponse({"object": "list", "data": [model_object()] if backend.model_id else []})

    async def model(request: Request) -> Response:
        """GET /v1/models/{id}: the OpenAI clients' `models.retrieve`."""
        try:
            check_key(request)
            wanted = request.path_params["model_id"]
            if not backend.model_id or wanted != backend.model_id:
                running = f"this server runs '{backend.model_id}'" if backend.model_id else "no model is loaded"
                raise ApiError(404, f"The model '{wanted}' does not exist here; {running}.", code="model_not_found",
                               param="model")
        except ApiError as exc:
            return _error(exc)
        return JSONResponse(model_object())

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "model": backend.model_id, "busy": backend.busy,
                             "queued": backend.queued, "requests": dict(backend.counts),
                             "version": __version__})

    async def completions_route(request: Request, chat: bool) -> Response:
        try:
            check_key(request)
            body = await read_json(request)
            if not backend.model_id:
                raise ApiError(503, "No model is loaded in Atomic Chat yet; pick one in the app, then try again.",
                               type_="server_error", code="model_not_loaded")
            req = parse_request(body, chat=chat, model_id=backend.model_id, defaults=config.defaults,
                                n_ctx=backend.n_ctx)
        except ApiError as exc:
            return _error(exc)
        except ClientDisconnect:
            return Response(status_code=499)
        stream = _Stream(backend, req)
        try:
            first = await stream.next(request)
        except ClientDisconnect:
            return Response(status_code=499)
        if isinstance(first, Failed):
            return _error(first.error)
        assert isinstance(first, Started)
        rid = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:24]
        shape = _Shape(rid, backend.model_id, chat, int(time.time()))
        if req.stream:
            return StreamingResponse(_sse_events(stream, req, shape, first), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        try:
            return await _whole(stream, req, shape, first, request)
        except ClientDisconnect:
            return Response(status_code=499)

    async def chat_completions(request: Request) -> Response:
        return await completions_route(request, chat=True)

    async def completions(request: Request) -> Response:
        return await completions_route(request, chat=False)

    routes = [
        Route("/health", health, methods=["GET"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/models/{model_id:path}", model, methods=["GET"]),
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/completions", completions, methods=["POST"]),
    ]
    served = ", ".join(f"{sorted(r.methods - {'HEAD'})[0]} {r.path.replace(':path}', '}')}" for r in routes)

    async def http_error(request: Request, exc: Exception) -> Response:
        """Unknown paths and wrong methods in the OpenAI error shape, naming what is served here
        (a client asking for /v1/embeddings learns that in a sentence, not from a bare "Not Found")."""
        assert isinstance(exc, HTTPException)
        where = f"{request.method} {request.url.path}"
        if exc.status_code == 405:
            message, code = f"{where}: this path takes another method. Served here: {served}.", "method_not_allowed"
        elif exc.status_code == 404:
            message, code = f"{where} is not served here. Served here: {served}.", "not_found"
        else:
            message, code = str(exc.detail), None
        return JSONResponse(ApiError(exc.status_code, message, code=code).body(), status_code=exc.status_code,
                            headers=exc.headers)

    middleware = [Middleware(CORSMiddleware, allow_origins=list(config.cors_origins), allow_methods=["GET", "POST"],
                             allow_headers=["*"])] if config.cors_origins else []
    return Starlette(routes=routes, exception_handlers={HTTPException: http_error}, middleware=middleware)


@dataclass(frozen=True)
class _Shape:
    """Builds the response objects of one request, chat or text completion."""

    rid: str
    model: str
    chat: bool
    created: int

    def _base(self, obj: str) -> dict[str, Any]:
        return {"id": self.rid, "object": obj, "created": self.created, "model": self.model,
                "system_fingerprint": f"atomicchat-{__version__}"}

    def whole(self, text: str, reason: str, calls: list[ToolCall] | None = None, thought: str = "") -> dict[str, Any]:
        if self.chat:
            message: dict[str, Any] = {"role": "assistant", "content": text or None if calls else text}
            if thought:
                message["reasoning_content"] = thought
            if calls:
                message["tool_calls"] = [c.as_openai() for c in calls]
            choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": reason}
            return {**self._base("chat.completion"), "choices": [choice]}
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": reason}
        return {**self._base("text_completion"), "choices": [choice]}

    def chunk(self, text: str | None, reason: str | None, first: bool = False, field: str = "content") -> dict[str, Any]:
        if self.chat:
            delta: dict[str, Any] = {}
            if first:
                delta["role"] = "assistant"
            if text is not None:
                delta[field] = text
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}
            return {**self._base("chat.completion.chunk"), "choices": [choice]}
        choice = {"index": 0, "text": text or "", "logprobs": None, "finish_reason": reason}
        return {**self._base("text_completion"), "choices": [choice]}

    def call_chunk(self, index: int, call: ToolCall) -> dict[str, Any]:
        """One tool call, whole, in a stream (OpenAI's clients accumulate by `index`)."""
        delta = {"tool_calls": [{"index": index, **call.as_openai()}]}
        return {**self._base("chat.completion.chunk"),
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]}


@dataclass(frozen=True)
class _Ended:
    """The last item of `_collect`: the engine's result and the tool calls found in the reply."""

    done: Done
    calls: list[ToolCall]

    @property
    def reason(self) -> str:
        return "tool_calls" if self.calls else finish_reason(self.done.reason)


@dataclass(frozen=True)
class _Thought:
    """A piece of the reply's reasoning (`reasoning_content`), apart from its answer."""

    text: str


class _NoTools:
    """Stands in for ToolCallSplitter when the request has no tools: text passes unchanged."""

    def feed(self, piece: str) -> str:
        return piece

    def finish(self) -> tuple[str, list[ToolCall]]:
        return "", []


class _Reply:
    """The chain a chat reply's text goes through: stop strings, then reasoning apart from the answer,
    then tool calls out of the answer. Completions get the stop strings only."""

    def __init__(self, req: ApiRequest, thinking: bool) -> None:
        self.stops = StopMatcher(req.stop)
        self.reasoning = ReasoningSplitter(thinking) if req.is_chat else None
        self.calls = ToolCallSplitter(req.tools) if req.tools else _NoTools()

    def _split(self, text: str, end: bool) -> list[str | _Thought]:
        thought, answer = ("", text) if self.reasoning is None else self.reasoning.feed(text)
        if end and self.reasoning is not None:
            more = self.reasoning.finish()
            thought, answer = thought + more[0], answer + more[1]
        out: list[str | _Thought] = [_Thought(thought)] if thought else []
        content = self.calls.feed(answer)
        return out + [content] if content else out

    def feed(self, piece: str) -> list[str | _Thought]:
        return self._split(self.stops.feed(piece), end=False)

    def finish(self) -> tuple[list[str | _Thought], list[ToolCall]]:
        out = self._split(self.stops.flush(), end=True)
        rest, found = self.calls.finish()
        return (out + [rest] if rest else out), found


async def _collect(stream: _Stream, req: ApiRequest, started: Started,
                   request: Request | None) -> AsyncIterator[str | _Thought | _Ended]:
    """Content and reasoning pieces to send (stop strings applied, tool calls held back), then
    _Ended; ApiError on failure."""
    reply = _Reply(req, started.thinking)
    while True:
        ev = await stream.next(request)
        if isinstance(ev, Delta):
            for item in reply.feed(ev.text):
                yield item
            if reply.stops.hit:
                stream.job.cancel.set()  # the reply is complete; stop decoding within one step
        elif isinstance(ev, Done):
            items, found = reply.finish()
            for item in items:
                yield item
            yield _Ended(Done("stop" if reply.stops.hit else ev.reason, ev.stats, ev.tokens), found)
            return
        elif isinstance(ev, Failed):
            raise ev.error


async def _whole(stream: _Stream, req: ApiRequest, shape: _Shape, started: Started, request: Request) -> Response:
    parts: list[str] = []
    thoughts: list[str] = []
    try:
        async for item in _collect(stream, req, started, request):
            if isinstance(item, _Ended):
                body = shape.whole("".join(parts), item.reason, item.calls, "".join(thoughts))
                body["usage"] = usage(started.n_prompt, item.done.stats.n_generated)
                body["timings"] = timings(item.done.stats)
                return JSONResponse(body)
            if isinstance(item, _Thought):
                thoughts.append(item.text)
            else:
                parts.append(item)
    except ApiError as exc:
        return _error(exc)
    raise RuntimeError("the reply ended without a result")


def _sse(data: dict[str, Any] | str) -> str:
    return f"data: {data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)}\n\n"


async def _sse_events(stream: _Stream, req: ApiRequest, shape: _Shape, started: Started) -> AsyncIterator[str]:
    n_prompt = started.n_prompt
    try:
        if shape.chat:
            yield _sse(shape.chunk("", None, first=True))
        async for item in _collect(stream, req, started, None):
            if isinstance(item, _Ended):
                for i, call in enumerate(item.calls):
                    yield _sse(shape.call_chunk(i, call))
                last = shape.chunk(None if shape.chat else "", item.reason)
                last["timings"] = timings(item.done.stats)
                yield _sse(last)
                if req.include_usage:
                    tail = {k: v for k, v in last.items() if k not in ("choices", "timings")}
                    yield _sse({**tail, "choices": [], "usage": usage(n_prompt, item.done.stats.n_generated)})
                break
            if isinstance(item, _Thought):
                yield _sse(shape.chunk(item.text, None, field="reasoning_content"))
            else:
                yield _sse(shape.chunk(item, None))
    except ApiError as exc:  # headers are sent: report in-band, as llama-server and OpenAI do
        yield _sse(exc.body())
    finally:
        stream.job.cancel.set()  # a no-op after Done; stops the engine if the client went away
    yield _sse("[DONE]")


