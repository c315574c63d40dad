"""Numbers for the acceptance/speedup indicator, kept free of Qt so they are easy to test.

Speedup is reply tokens/s over the measured target-only tokens/s of the same model on the same
machine. Until that baseline is measured the figure is an estimate and says so: tokens per step
times the share of step time spent verifying, i.e. it assumes a verify pass costs what one plain
decode step costs (close on a GPU, optimistic on a CPU, where a wide verify batch costs more).
"""

from __future__ import annotations

from dataclasses import dataclass

from atomicchat.store.records import ReplyStats


@dataclass(frozen=True)
class Speedup:
    value: float
    measured: bool


def speedup(stats: ReplyStats, baseline_tps: float | None) -> Speedup | None:
    if not stats.used_draft or stats.n_generated == 0:
        return None
    tps = stats.tokens_per_second
    if baseline_tps and baseline_tps > 0 and tps > 0:
        return Speedup(tps / baseline_tps, True)
    if stats.n_steps == 0:
        return None
    per_step = stats.n_generated / stats.n_steps
    busy = stats.draft_seconds + stats.verify_seconds
    share = stats.verify_seconds / busy if busy > 0 else 1.0
    return Speedup(max(per_step * share, 0.0), False)


@dataclass(frozen=True)
class StatsText:
    speed: str  # "123.4 tok/s"
    acceptance: str  # "acceptance 63% (120/190)" or ""
    tau: str  # "τ 3.41" or ""
    speedup: str  # "2.3× vs target-only" / "≈2.3× (estimated)" / ""
    mode: str  # "DFlash" / "target only"


def format_stats(stats: ReplyStats, baseline_tps: float | None) -> StatsText:
    speed = f"{stats.tokens_per_second:.1f} tok/s" if stats.generate_seconds > 0 else "– tok/s"
    if not stats.used_draft:
        return StatsText(speed, "", "", "", "target only")
    acc = (
        f"acceptance {stats.acceptance:.0%} ({stats.n_accepted}/{stats.n_drafted})"
        if stats.n_drafted
        else "acceptance –"
    )
    tau = f"τ {stats.tau:.2f}"
    s = speedup(stats, baseline_tps)
    if s is None:
        sp = ""
    elif s.measured:
        sp = f"{s.value:.2f}× vs target-only"
    else:
        sp = f"≈{s.value:.1f}× (estimated)"
    return StatsText(speed, acc, tau, sp, "DFlash")


def stats_tooltip(stats: ReplyStats, baseline_tps: float | None) -> str:
    lines = [
        f"Generated {stats.n_generated} tokens in {stats.generate_seconds:.2f} s "
        f"(prompt {stats.n_prompt} tokens, {stats.n_prompt_cached} reused, prefill {stats.prefill_seconds:.2f} s)."
    ]
    if stats.used_draft:
        lines.append(
            f"Acceptance: {stats.n_accepted} of {stats.n_drafted} drafted tokens were accepted. "
            f"τ: {stats.tau:.2f} tokens per target step on average ({stats.n_draft_steps} draft steps)."
        )
        if baseline_tps:
            lines.append(f"Speedup against the measured target-only speed of {baseline_tps:.1f} tok/s on this machine.")
        else:
            lines.append("Speedup is estimated until the target-only baseline is measured (Model ▸ Measure baseline).")
    if stats.device:
        lines.append(f"Device: {stats.device}.")
    return "\n".join(lines)
