"""`atomicchat models list|pull|rm|import|refresh`: the model manager without the GUI.

`pull` prints progress on stderr (one updating line on a terminal, a line every few seconds in a
log) and can be interrupted with Ctrl-C: the download stops cleanly and the next `pull` resumes it.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any

from atomicchat.cli.errors import CliError
from atomicchat.models.errors import ModelsError

GIB = 1024**3


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("models", help="list, download, import and remove models")
    sub = p.add_subparsers(dest="models_command", parser_class=type(p))
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    ls = sub.add_parser("list", help="catalog, quants, hardware fit and installed models")
    ls.add_argument("--ctx", type=int, default=8192, help="context length for the fit estimate (default 8192)")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.add_argument("--catalog", help="read this catalog file instead of the bundled one")
    ls.set_defaults(func=cmd_list)

    pull = sub.add_parser("pull", help="download a target + draft pair into the Hugging Face cache")
    pull.add_argument("pair", nargs="?", help="catalog pair id (default: the first pair)")
    pull.add_argument("--quant", help="target quant, e.g. Q4_K_M (default: the recommended one)")
    pull.add_argument("--draft-quant", help="draft quant (default: Q8_0, the recommended one)")
    pull.add_argument("--no-draft", action="store_true", help="fetch the target only")
    pull.add_argument("--catalog", help="read this catalog file instead of the bundled one")
    pull.set_defaults(func=cmd_pull)

    rm = sub.add_parser("rm", help="remove an installed model and free its disk space")
    rm.add_argument("name", help="registry key, file path, or catalog pair id")
    rm.add_argument("--quant", help="with a pair id: remove only this target quant")
    rm.add_argument("--delete-imported", action="store_true", help="also delete imported files from disk")
    rm.set_defaults(func=cmd_rm)

    imp = sub.add_parser("import", help="register a GGUF you already have (validated, not copied)")
    imp.add_argument("path", help="target or DFlash draft .gguf")
    imp.add_argument("--pair-with", help="registry key of the file to pair it with (default: every match)")
    imp.set_defaults(func=cmd_import)

    se = sub.add_parser("search", help="search the Hugging Face Hub for GGUF models (or list one repo's quants)")
    se.add_argument("query", help="free text (e.g. qwen3.5), an owner/name repo id, or a Hub link")
    se.add_argument("--ctx", type=int, default=8192, help="context length for the fit estimate (default 8192)")
    se.add_argument("--json", action="store_true", help="machine-readable output")
    se.set_defaults(func=cmd_search)

    ref = sub.add_parser("refresh", help="update sizes and checksums from the Hub")
    ref.set_defaults(func=cmd_refresh)


def _guard(fn: Any) -> Any:
    """Turn model-manager errors into the CLI's one-line error with exit code 1."""

    def wrapper(args: argparse.Namespace) -> int:
        try:
            return int(fn(args) or 0)
        except ModelsError as exc:
            raise CliError(str(exc), code=1) from exc

    wrapper.__name__ = fn.__name__
    return wrapper


def _gib(n: int | None) -> str:
    """Sizes the way people read them: 6.02 GiB, 3.0 MiB, 512 B."""
    if n is None:
        return "?"
    for unit, scale in (("GiB", GIB), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}" if unit == "GiB" else f"{n / scale:.1f} {unit}"
    return f"{n} B"


# ---------------------------------------------------------------- search


@_guard
def cmd_search(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from atomicchat.models import hub_search
    from atomicchat.models.drafts import draft_offer

    result = hub_search.search(args.query)
    if result.note:
        print(result.note, file=sys.stderr)
    if len(result.hits) == 1 and result.hits[0].quants is not None:
        return _print_repo(result.hits[0], args)
    if args.json:
        print(json.dumps([asdict(h) for h in result.hits]))
        return 0
    if not result.hits:
        print(f"No GGUF models on the Hub match '{args.query}'.")
        return 0
    for h in result.hits:
        flags = " · gated" if h.gated else ""
        draft = " · DFlash draft known" if draft_offer(h.repo_id).draft else ""
        print(f"{h.repo_id:60} {h.downloads:>9,} downloads  {h.license or 'licence ?'}{flags}{draft}")
    print("\nList a repo's quants with: atomicchat models search OWNER/NAME")
    return 0


def _print_repo(hit: Any, args: argparse.Namespace) -> int:
    from atomicchat.models import hardware, hub_search
    from atomicchat.models.drafts import draft_offer, quant_advice
    from atomicchat.models.fit import estimate_files, facts_from_header

    offer = draft_offer(hit.repo_id)
    rows: list[dict[str, Any]] = []
    facts, why = None, ""
    if hit.quants and not hub_search.hub.is_offline():
        try:  # one header serves every quant of the repo: the shapes are the same
            facts = facts_from_header(hub_search.remote_header(hit.repo_id, hit.quants[0].files[0]), hit.quants[0].files[0])
        except ModelsError as exc:
            why = str(exc)
    hw = hardware.probe()
    for q in hit.quants or ():
        est = estimate_files(facts, q.size, args.ctx, hardware=hw, quant=q.quant) if facts else None
        rows.append({"quant": q.quant, "files": list(q.files), "size": q.size,
                     "fit": est.verdict.value if est else None, "fit_message": est.message if est else why,
                     "advice": quant_advice(q.quant, offer.file is not None)})
    if args.json:
        print(json.dumps({"repo": hit.repo_id, "license": hit.license, "gated": hit.gated, "quants": rows,
                          "mmproj": list(hit.mmproj), "dflash": offer.text}))
        return 0
    print(f"{hit.repo_id}  ·  {hit.license or 'licence ?'}{'  ·  gated' if hit.gated else ''}")
    if not rows:
        print("This repository has no GGUF chat model files.")
    for r in rows:
        split = f" ({len(r['files'])} parts)" if len(r["files"]) > 1 else ""
        print(f"  {r['quant']:10} {_gib(r['size']):>10}{split:12} {r['fit_message']}")
        if r["advice"]:
            print(f"  {'':10} {r['advice']}")
    if hit.mmproj:
        print(f"  vision projector(s), not chat models: {', '.join(hit.mmproj)}")
    print(offer.text)
    return 0


# ---------------------------------------------------------------- list


@_guard
def cmd_list(args: argparse.Namespace) -> int:
    from atomicchat.models import catalog, fit, hardware
    from atomicchat.models.registry import Registry

    cat = catalog.load_catalog(args.catalog)
    hw = hardware.probe()
    reg = Registry()
    installed = {f.key: f for f in reg.files()}
    rows: list[dict[str, Any]] = []
    for pair in cat.pairs:
        for q in pair.target.quants:
            t, d = pair.files(q.name)
            est = fit.estimate(pair, q.name, args.ctx, hardware=hw)
            rows.append(
                {
                    "pair": pair.id,
                    "quant": q.name,
                    "file": t.filename,
                    "size": t.size,
                    "size_exact": t.size_exact,
                    "installed": t.key in installed,
                    "draft": d.filename,
                    "draft_installed": d.key in installed,
                    "fit": est.verdict.value,
                    "fit_message": est.message,
                    "fit_breakdown": est.breakdown(),
                    "need_bytes": est.total,
                    "kv_bytes": est.kv_target + est.kv_draft,
                }
            )
    if args.json:
        out = {
            "hardware": {
                "summary": hw.summary(),
                "gpu_offload": hw.gpu_offload,
                "vram_free": hw.vram_free,
                "ram_total": hw.ram_total,
            },
            "n_ctx": args.ctx,
            "quants": rows,
            "installed": [vars_of(f) for f in installed.values()],
            "pairs": [{"target": p.target.key, "draft": p.draft.key, "pair_id": p.pair_id} for p in reg.pairs()],
        }
        print(json.dumps(out, indent=2))
        return 0
    print(f"Hardware: {hw.summary()}")
    print(f"Fit at a context of {args.ctx} tokens (weights + KV cache + draft):")
    for pair in cat.pairs:
        print(f"\n{pair.id}  {pair.name}")
        for r in (r for r in rows if r["pair"] == pair.id):
            mark = "installed" if r["installed"] else "-"
            size = _gib(r["size"]) + ("" if r["size_exact"] else " (est.)")
            print(f"  {r['quant']:<8} {size:<18} {mark:<10} {r['fit_message']}")
            print(f"  {'':<8} {'':<18} {'':<10} ({r['fit_breakdown']})")
        draft = pair.draft.quant()
        print(f"  draft {draft.name} ({_gib(draft.size)}), {len(pair.draft.quants)} draft quants available")
    print("\nInstalled:" if installed else "\nInstalled: nothing yet (atomicchat models pull)")
    for f in installed.values():
        state = "verified" if f.verified and reg.is_intact(f) else "CHANGED ON DISK" if f.verified else "unverified"
        print(f"  {f.key}  [{f.role}, {_gib(f.size)}, {state}]")
    for p in reg.pairs():
        print(f"  ready: {p.target.name} + {p.draft.name}")
    return 0


def vars_of(f: Any) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(f)


# ---------------------------------------------------------------- pull


class _Printer:
    """Progress on stderr: one rewritten line on a terminal, a line every 5 s otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self._last = 0.0
        self._file = -1

    def __call__(self, p: Any) -> None:
        now = time.monotonic()
        new_file = p.file_index != self._file
        if not (new_file or p.phase == "done" or now - self._last >= (0.25 if self.tty else 5.0)):
            return
        self._last, self._file = now, p.file_index
        if p.phase == "done":
            line = f"done: {_gib(p.done)} in {p.file_count} file(s)"
        else:
            pct = 100 * p.file_done / p.file_total if p.file_total else 0
            speed = f"{p.speed / 1e6:.1f} MB/s" if p.speed else "-"
            eta = f"ETA {_duration(p.eta)}" if p.eta is not None else ""
            line = (
                f"[{p.file_index + 1}/{p.file_count}] {p.phase} {p.filename} {pct:5.1f}% "
                f"({_gib(p.file_done)} of {_gib(p.file_total)}) {speed} {eta}"
            ).rstrip()
        if self.tty:
            end = "\n" if p.phase == "done" else ""
            sys.stderr.write("\r\033[K" + line + end)
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _duration(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


@_guard
def cmd_pull(args: argparse.Namespace) -> int:
    from atomicchat.models import catalog
    from atomicchat.models.downloads import DownloadJob

    cat = catalog.load_catalog(args.catalog)
    if not cat.pairs:
        raise CliError("The catalog lists no models.", code=1)
    pair = cat.pair(args.pair) if args.pair else cat.pairs[0]
    job = DownloadJob(pair, args.quant, args.draft_quant, include_draft=not args.no_draft)
    cancel = threading.Event()
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["result"] = job.run(progress_cb=_Printer(), cancel_event=cancel)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            outcome["error"] = exc

    worker = threading.Thread(target=work, name="atomicchat-pull")
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.2)
    except KeyboardInterrupt:
        cancel.set()
        worker.join()
        sys.stderr.write("\nCancelled. Run the same command again to resume the download.\n")
        return 130
    if "error" in outcome:
        if sys.stderr.isatty():
            sys.stderr.write("\n")
        raise outcome["error"]
    result = outcome["result"]
    for f in result.files:
        how = (
            "already present"
            if f.already_present
            else f"downloaded {_gib(f.fetched)}" + (f" (resumed at {_gib(f.resumed_from)})" if f.resumed_from else "")
        )
        print(f"{f.ref.role}: {f.path}  [{how}, sha256 {(f.sha256 or '?')[:12]}]")
    if result.paired:
        print(f"Ready: {pair.name} ({result.files[0].ref.quant}).")
    elif result.pair_problem:
        print(f"Downloaded, but the draft cannot be used with this target: {result.pair_problem}")
    return 0


# ---------------------------------------------------------------- rm / import / refresh


@_guard
def cmd_rm(args: argparse.Namespace) -> int:
    from atomicchat.models.registry import Registry

    reg = Registry()
    keys = reg.resolve(args.name)
    if args.quant:
        keys = [k for k in keys if (f := reg.get(k)) and f.role == "target" and (f.quant or "").lower() == args.quant.lower()]
        pair_targets = [f for f in reg.targets() if f.pair_id == args.name and f.key not in keys]
        if not pair_targets:  # last target of this pair gone: its draft goes too
            keys += [f.key for f in reg.drafts() if f.pair_id == args.name]
    if not keys:
        raise CliError(
            f"No installed model matches '{args.name}'. Run `atomicchat models list` to see what is installed.", code=1
        )
    freed = 0
    for key in keys:
        removed = reg.remove(key, delete_imported=args.delete_imported)
        freed += removed.freed_bytes
        kept = "" if removed.paths or not key.startswith("local:") else " (file kept on disk)"
        print(f"removed {key}{kept}")
    print(f"Freed {_gib(freed)}.")
    return 0


@_guard
def cmd_import(args: argparse.Namespace) -> int:
    from atomicchat.models.registry import Registry

    result = Registry().import_gguf(args.path, pair_with=args.pair_with)
    f = result.file
    print(f"imported {f.role} '{f.name}' ({_gib(f.size)}) as {f.key}")
    for key in result.paired_with:
        print(f"  paired with {key}")
    for key, reason in result.not_paired:
        print(f"  not paired with {key}: {reason}")
    if args.pair_with and not result.paired_with:
        return 1
    return 0


@_guard
def cmd_refresh(args: argparse.Namespace) -> int:
    from atomicchat.models import catalog

    cat = catalog.refresh()
    n = sum(len(p.target.quants) + len(p.draft.quants) for p in cat.pairs)
    print(f"Catalog refreshed: {len(cat.pairs)} pair(s), {n} quant files with current sizes and checksums.")
    return 0
