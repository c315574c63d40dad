"""UI event-loop lag while a reply streams into the real main window.

A QTimer probe fires every --probe-ms and records how late each tick is; a scripted engine (no
llama.cpp, so the figure measures the UI alone) streams markdown with code blocks at --rate
tokens per second through the real worker thread, ChatSession, and message rendering. Prints
p50/p95/p99/max lateness while idle and while streaming. A benchmark to read, not a timed test.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/ui_lag.py --rate 600 --tokens 4000
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("ATOMICCHAT_HOME", tempfile.mkdtemp(prefix="atomicchat-bench-"))

from PySide6.QtCore import QElapsedTimer, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from atomicchat.engine.types import EngineInfo, Finished, GenStats, Step  # noqa: E402

CHARS_PER_TOKEN = 4
PARAGRAPH = (
    "Speculative decoding lets a small **draft** propose several tokens that the target checks in one pass; "
    "accepted tokens cost almost nothing, so `tau` tokens arrive per target step. "
)
CODE = "```python\ndef verify(draft, target):\n    accepted = 0\n    for d, t in zip(draft, target):\n        if d != t:\n            break\n        accepted += 1\n    return accepted\n```\n"
LIST = "- first point with *emphasis*\n- second point\n- third point with a [link](https://example.com)\n"


def reply_text(n_chars: int) -> str:
    parts, i = [], 0
    while sum(map(len, parts)) < n_chars:
        parts.append([f"## Section {i}\n", PARAGRAPH * 3, CODE, LIST][i % 4] + "\n")
        i += 1
    return "".join(parts)[:n_chars]


class PacedEngine:
    """Streams a fixed markdown text at a steady token rate, DFlash-like steps of 1-6 tokens."""

    def __init__(self, config, rate: float, n_tokens: int) -> None:
        self.rate, self.n_tokens = rate, n_tokens
        self.n_ctx = config.n_ctx
        self.info = EngineInfo(
            "bench-target",
            Path(config.target_path),
            "bench-draft",
            Path(config.target_path),
            8,
            7,
            config.n_ctx,
            "CPU",
            0,
            True,
            False,
            512,
        )

    def chat_prompt(self, messages, enable_thinking=None):
        return [1, 2, 3]

    def detokenize(self, tokens):
        return "<|im_start|>assistant\n"  # the prompt's end: no <think> block opened

    def generate(self, tokens, params, should_stop=lambda: False):
        text = reply_text(self.n_tokens * CHARS_PER_TOKEN)
        pattern = (5, 2, 0, 3, 6, 1, 4)
        stats, pos, step, t0 = GenStats(n_prompt=3), 0, 0, time.perf_counter()
        while stats.n_generated < self.n_tokens and not should_stop():
            acc = pattern[step % len(pattern)]
            n = acc + 1
            piece = text[pos : pos + n * CHARS_PER_TOKEN]
            pos += len(piece)
            stats.n_generated += n
            stats.n_steps += 1
            stats.n_draft_steps += 1
            stats.n_drafted += 7
            stats.n_accepted += acc
            due = t0 + stats.n_generated / self.rate
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            stats.generate_seconds = time.perf_counter() - t0
            stats.verify_seconds = stats.generate_seconds * 0.8
            stats.draft_seconds = stats.generate_seconds * 0.2
            yield Step(list(range(n)), piece, [True] * acc + [False], 7, acc, replace(stats))
            step += 1
        yield Finished("eos", replace(stats))

    def close(self) -> None:
        pass


class LagProbe:
    def __init__(self, interval_ms: int) -> None:
        self.interval = interval_ms
        self.samples: list[float] = []
        self.when: list[float] = []
        self.clock = QElapsedTimer()
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.recording = False

    def start(self) -> None:
        self.clock.start()
        self._last = self.clock.nsecsElapsed()
        self.timer.start()

    def _tick(self) -> None:
        now = self.clock.nsecsElapsed()
        if self.recording:
            self.samples.append(max(0.0, (now - self._last) / 1e6 - self.interval))
            self.when.append(now / 1e9)
        self._last = now

    def take(self) -> list[float]:
        out, self.samples = self.samples, []
        self.last_when, self.when = self.when, []
        return out


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q / 100 * (len(s) - 1))))]


def report(name: str, lag: list[float]) -> None:
    print(
        f"{name:<10} ticks={len(lag):5d}  p50={pct(lag, 50):6.2f} ms  p95={pct(lag, 95):6.2f} ms  "
        f"p99={pct(lag, 99):6.2f} ms  max={max(lag, default=float('nan')):6.2f} ms  mean={statistics.fmean(lag) if lag else 0:5.2f} ms"
    )


def main(argv: list[str] | None = None, engine_factory=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=float, default=600.0, help="tokens per second streamed (default 600)")
    ap.add_argument("--tokens", type=int, default=4000, help="tokens in the reply (default 4000)")
    ap.add_argument("--probe-ms", type=int, default=5, help="probe timer interval (default 5 ms)")
    ap.add_argument("--idle-s", type=float, default=1.0, help="seconds of idle measurement first")
    ap.add_argument("--colour", action="store_true", help="stream with accepted-draft colouring on")
    ap.add_argument("--worst", type=int, default=0, help="also list the N latest ticks and when they happened")
    args = ap.parse_args(argv)

    app = QApplication.instance() or QApplication([])
    from atomicchat.store import open_store
    from atomicchat.ui.common import async_tasks
    from atomicchat.ui.main_window import MainWindow
    from atomicchat.models.service import ModelChoice
    from atomicchat.ui.common.theme import apply_theme
    from atomicchat.ui.engine.host import EngineHost

    apply_theme(app)
    async_tasks.install_loop(app)
    store = open_store()
    make = engine_factory or PacedEngine
    host = EngineHost(lambda cfg, progress: make(cfg, args.rate, args.tokens))
    window = MainWindow(store, host, auto_load=False)
    window.resize(1100, 800)
    window.show()
    fake_model = Path(os.environ["ATOMICCHAT_HOME"]) / "bench.gguf"
    fake_model.write_bytes(b"bench")
    window.load_model(ModelChoice(fake_model, fake_model, "chosen"))
    window.settings = replace(window.settings, max_tokens=args.tokens, colour_draft_tokens=args.colour)
    window.session.set_colour_drafts(args.colour)

    def spin(cond, timeout: float) -> None:
        end = time.monotonic() + timeout
        while not cond() and time.monotonic() < end:
            app.processEvents()
            time.sleep(0.0005)

    spin(lambda: window.ready is not None, 10)
    save_ms: list[float] = []
    real_update = store.chats.update_message

    def timed_update(*a, **kw):  # the throttled crash-safety saves run on the UI thread: time them
        t = time.perf_counter()
        real_update(*a, **kw)
        save_ms.append((time.perf_counter() - t) * 1000)

    store.chats.update_message = timed_update  # type: ignore[method-assign]
    probe = LagProbe(args.probe_ms)
    probe.start()
    probe.recording = True
    idle_end = time.monotonic() + args.idle_s
    while time.monotonic() < idle_end:
        app.processEvents()
        time.sleep(0.0005)
    idle = probe.take()
    t0 = time.perf_counter()
    window.session.send("Explain speculative decoding with code.")
    spin(lambda: not window.session.busy, 600)
    elapsed = time.perf_counter() - t0
    streaming = probe.take()
    probe.recording = False
    reply = window.view.widgets()[-1] if window.view.widgets() else None
    if reply is None or reply.stats.n_generated < args.tokens or reply.stats.error:
        # a benchmark that streamed nothing measured nothing: fail, do not print figures
        why = reply.stats.error if reply is not None and reply.stats.error else "the reply is short or missing"
        got = reply.stats.n_generated if reply is not None else 0
        print(f"ui_lag: streamed {got} of {args.tokens} tokens ({why}); no figures", file=sys.stderr)
        window.shutdown()
        store.close()
        return 1
    print(
        f"reply: {reply.stats.n_generated} tokens, {len(reply.text)} chars in {elapsed:.2f} s "
        f"({reply.stats.n_generated / elapsed:.0f} tok/s requested {args.rate:.0f}); probe every {args.probe_ms} ms; "
        f"colouring {'on' if args.colour else 'off'}; platform {app.platformName()}"
    )
    report("idle", idle)
    report("streaming", streaming)
    print(
        f"saves      n={len(save_ms):5d}  p50={pct(save_ms, 50):6.2f} ms  max={max(save_ms, default=0):6.2f} ms (SQLite, on the UI thread)"
    )
    if args.worst:
        t_start = probe.last_when[0] if probe.last_when else 0.0
        worst = sorted(zip(streaming, probe.last_when, strict=True), reverse=True)[: args.worst]
        print(
            "worst ticks (lag ms @ seconds into the stream):",
            ", ".join(f"{v:.1f}@{t - t_start:.2f}s" for v, t in worst),
        )
    window.shutdown()
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
