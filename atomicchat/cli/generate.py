"""`atomicchat generate`: one generation on the engine, streamed or as one JSON object.

This is the contract the benchmarks and checks rely on: `--json` prints tokens, text and counts.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from atomicchat.cli.errors import CliError
from atomicchat.engine.draft_confidence import DEFAULT_P_MIN, p_min_in_range
from atomicchat.engine.requests import CLI_MAX_TOKENS, engine_config, gen_params
from atomicchat.engine.types import EngineConfig, GenParams


def _token_list(text: str) -> list[int]:
    try:
        ids = [int(x) for x in text.replace(" ", "").split(",") if x != ""]
    except ValueError as exc:
        raise argparse.ArgumentTypeError("expected comma-separated token ids, e.g. 1,2,3") from exc
    if not ids:
        raise argparse.ArgumentTypeError("no token ids given")
    return ids


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("generate", help="generate text from a prompt (target-only or with a DFlash draft)")
    p.add_argument("--model", required=True, type=Path, help="target GGUF")
    p.add_argument("--draft", type=Path, help="DFlash draft GGUF (enables speculative decoding)")
    p.add_argument("--draft-max", type=int, help="draft tokens per step (default block_size-1)")
    p.add_argument("--draft-p-min", type=float, metavar="P",
                   help="stop a draft at its first token below this probability (llama.cpp's --spec-draft-p-min; "
                        f"default {DEFAULT_P_MIN:g}, 0: draft every position)")
    p.add_argument("--temperature", type=float, default=GenParams.temperature, help="0 = greedy (default)")
    p.add_argument("--top-k", type=int, default=GenParams.top_k)
    p.add_argument("--top-p", type=float, default=GenParams.top_p)
    p.add_argument("--min-p", type=float, default=GenParams.min_p)
    p.add_argument("--seed", type=int, help="sampling seed (default random)")
    p.add_argument("--max-tokens", type=int, default=CLI_MAX_TOKENS)
    p.add_argument("--ctx", type=int, default=EngineConfig.n_ctx, help="context size in tokens")
    p.add_argument("--gpu-layers", type=int, default=EngineConfig.n_gpu_layers, help="-1 = all, 0 = CPU only")
    p.add_argument("--threads", type=int, help="CPU threads (default: physical cores)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--prompt", help="prompt text (rendered with the model's chat template unless --raw)")
    g.add_argument("--prompt-tokens", type=_token_list, help="raw token ids, e.g. 1,2,3 (no template)")
    p.add_argument("--system", help="system prompt for the chat template")
    p.add_argument("--file", type=Path, action="append", default=[], metavar="PATH",
                   help="a text file to attach after the prompt, as the app does (repeatable; not with --raw)")
    p.add_argument("--raw", action="store_true", help="feed --prompt as plain text, without the chat template")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of streaming")
    p.set_defaults(func=run)


def _validate(args: argparse.Namespace) -> None:
    if args.max_tokens < 1:
        raise CliError("--max-tokens must be at least 1")
    if args.draft_max is not None and args.draft_max < 1:
        raise CliError("--draft-max must be at least 1")
    if args.draft_max is not None and not args.draft:
        raise CliError("--draft-max needs --draft")
    if args.draft_p_min is not None and not p_min_in_range(args.draft_p_min):
        raise CliError("--draft-p-min must be from 0 to below 1")
    for flag, value in (("--temperature", args.temperature), ("--top-p", args.top_p), ("--min-p", args.min_p)):
        if not math.isfinite(value):
            raise CliError(f"{flag} must be a finite number, not {value}")
    if args.temperature < 0:
        raise CliError("--temperature cannot be negative")
    for flag, value in (("--top-p", args.top_p), ("--min-p", args.min_p)):
        if not 0.0 <= value <= 1.0:
            raise CliError(f"{flag} must be between 0 and 1")
    for flag, text in (("--prompt", args.prompt), ("--system", args.system)):
        if text is not None:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise CliError(f"{flag} is not valid UTF-8 text (check the terminal's encoding)") from None
    if args.ctx < 16:
        raise CliError("--ctx must be at least 16")
    if args.file and (args.raw or args.prompt is None):
        raise CliError("--file goes with --prompt and the chat template, not with --raw or --prompt-tokens")
    if args.seed is not None and not 0 <= args.seed < 2**32:
        raise CliError("--seed must be between 0 and 4294967295")


def run(args: argparse.Namespace) -> int:
    _validate(args)
    from atomicchat import attachments
    from atomicchat.engine import Engine, Finished, Step

    try:  # read before the model loads: a wrong path is said at once
        files = [attachments.read(path, args.ctx) for path in args.file]
    except attachments.AttachmentError as exc:
        raise CliError(str(exc)) from None

    engine = Engine(engine_config(args.model, args.draft, n_ctx=args.ctx, n_gpu_layers=args.gpu_layers,
                                  n_threads=args.threads, draft_max=args.draft_max, draft_p_min=args.draft_p_min))
    try:
        if args.prompt_tokens is not None:
            prompt = args.prompt_tokens
        elif args.raw:
            prompt = engine.tokenize(args.prompt, add_special=True)
        else:
            messages = ([{"role": "system", "content": args.system}] if args.system else []) + [
                {"role": "user", "content": attachments.compose(args.prompt, files)}
            ]
            prompt = engine.chat_prompt(messages)
        params = gen_params(max_tokens=args.max_tokens, temperature=args.temperature, top_k=args.top_k,
                            top_p=args.top_p, min_p=args.min_p, seed=args.seed)
        final = None
        for ev in engine.generate(prompt, params):
            if isinstance(ev, Step) and not args.json:
                sys.stdout.write(ev.text)
                sys.stdout.flush()
            elif isinstance(ev, Finished):
                final = ev
        assert final is not None
        s = final.stats
        if args.json:
            print(
                json.dumps(
                    {
                        "tokens": final.tokens,
                        "text": final.text,
                        "n_prompt": s.n_prompt,
                        "n_generated": s.n_generated,
                        "n_drafted": s.n_drafted,
                        "n_accepted": s.n_accepted,
                        "n_steps": s.n_steps,
                        "acceptance": round(s.acceptance, 6),
                        "tau": round(s.tau, 6),
                        "tokens_per_second": round(s.tokens_per_second, 3),
                        "prefill_seconds": round(s.prefill_seconds, 6),
                        "generate_seconds": round(s.generate_seconds, 6),
                        "stop_reason": final.reason,
                        "device": engine.info.device,
                    }
                )
            )
        else:
            sys.stdout.write("\n")
            line = f"{s.tokens_per_second:.1f} tok/s · {s.n_generated} tokens"
            if s.n_drafted:
                line += f" · {100 * s.acceptance:.1f}% draft tokens accepted · τ {s.tau:.2f}"
            print(f"[{line} · stop: {final.reason}]", file=sys.stderr)
        return 0
    finally:
        engine.close()
