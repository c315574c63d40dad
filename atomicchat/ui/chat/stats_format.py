"""Numbers for the acceptance/speedup indicator, kept free of Qt so they are easy to test.

Speedup is reply tokens/s over the measured target-only tokens/s of the same model on the same
machine at the context positions the reply used (atomicchat.stats.TargetSpeed: measured once per
model after it loads, after a short and a long prompt). No speedup is shown before that (a guess
would be wrong on a CPU, where a wide verify costs more than one token), and no rate is shown for a
span too short to measure (atomicchat.stats.MIN_RATE_*).
"""

from __future__ import annotations

from dataclasses import dataclass

from atomicchat.stats import TargetSpeed
from atomicchat.store.records import ReplyStats


def baseline_tps(stats: ReplyStats, baseline: TargetSpeed | None) -> float | None:
    """Target-only tok/s on this machine over the context positions this reply used, or None."""
    if baseline is None or baseline.tokens_per_second <= 0:
        return None
    return baseline.for_reply(stats.n_prompt, stats.n_generated)


def speedup(stats: ReplyStats, baseline: TargetSpeed | None) -> float | None:
    """Measured speedup of a DFlash reply over target-only on this machine, or None."""
    base = baseline_tps(stats, baseline)
    if not stats.used_draft or not stats.has_rate or not base:
        return None
    return stats.tokens_per_second / base


NO_DRAFTS = "no drafts: target steps only, as drafting looked slower here"


def drafted_nothing(stats: ReplyStats) -> bool:
    """A DFlash reply whose every step was the target's own (the adaptive policy stayed plain)."""
    return stats.used_draft and stats.n_steps > 1 and not stats.n_draft_steps


@dataclass(frozen=True)
class StatsText:
    speed: str  # "123.4 tok/s" or "1 token"
    acceptance: str  # "acceptance 63% (120/190)" or ""
    tau: str  # "τ 3.41" or ""
    speedup: str  # "1.40× vs target-only (23 tok/s, measured)" / "slower than target-only: 0.60× ..." / ""
    mode: str  # "DFlash" / "target only"
    slower: bool = False  # DFlash measured slower than the target alone: offer to turn it off
    drafting: str = ""  # what the adaptive draft length did: "drafts 4.2/step · 12% plain steps"


def drafting_text(stats: ReplyStats) -> str:
    """Mean drafted tokens per drafting step and the share of plain target steps the policy took."""
    steps = max(stats.n_steps - 1, 0)  # the first token comes from the prompt, not a step
    if not steps:
        return ""
    plain = (steps - stats.n_draft_steps) / steps
    parts = [f"drafts {stats.mean_draft_length:.1f}/step"] if stats.n_draft_steps else ["no drafts"]
    if plain >= 0.005:
        parts.append(f"{plain:.0%} plain steps")
    return " · ".join(parts)


def _count(n: int) -> str:
    return f"{n} token{'s' if n != 1 else ''}"


def format_stats(stats: ReplyStats, baseline: TargetSpeed | None) -> StatsText:
    speed = f"{stats.tokens_per_second:.1f} tok/s" if stats.has_rate else _count(stats.n_generated)
    if not stats.used_draft:
        return StatsText(speed, "", "", "", "target only")
    if drafted_nothing(stats):
        # Every step was the target's own: a ratio to the baseline would only measure the window and
        # the host's noise (in the app, target-only replies ran at 0.91-1.02x of it on a 2-core CPU,
        # as did these), and "slower" with an offer to turn DFlash off would blame the draft for it.
        return StatsText(speed, "", "", "", "DFlash", drafting=NO_DRAFTS)
    acc = (
        f"acceptance {stats.acceptance:.0%} ({stats.n_accepted}/{stats.n_drafted})"
        if stats.n_drafted
        else "acceptance –"
    )
    tau = f"τ {stats.tau:.2f}"
    d = drafting_text(stats)
    s = speedup(stats, baseline)
    b = baseline_tps(stats, baseline)
    if s is None or b is None:
        return StatsText(speed, acc, tau, "", "DFlash", drafting=d)
    base = f"{b:.0f} tok/s" if b >= 10 else f"{b:.1f} tok/s"
    if s < 0.995:
        return StatsText(speed, acc, tau, f"slower than target-only: {s:.2f}× ({base}, measured)", "DFlash", True, d)
    if s < 1.005:  # "slower: 1.00×" read as a contradiction; no gain still earns the offer to turn it off
        return StatsText(speed, acc, tau, f"no faster than target-only: 1.00× ({base}, measured)", "DFlash", True, d)
    return StatsText(speed, acc, tau, f"{s:.2f}× vs target-only ({base}, measured)", "DFlash", drafting=d)


def stats_tooltip(stats: ReplyStats, baseline: TargetSpeed | None) -> str:
    lines = [
        f"Generated {stats.n_generated} tokens in {stats.generate_seconds:.2f} s "
        f"(prompt {stats.n_prompt} tokens, {stats.n_prompt_cached} reused, prefill {stats.prefill_seconds:.2f} s)."
    ]
    if drafted_nothing(stats):
        lines.append(
            "No drafts in this reply: the draft length is chosen each step from the measured cost of drafting "
            "and verifying on this machine and how often drafts were accepted, and here a plain target step "
            "looked faster every time. The draft stays loaded and is tried again now and then, so the speed "
            "is the target's own."
        )
        b = baseline_tps(stats, baseline)
        if baseline is not None and b:
            lines.append(f"The target alone was measured at {b:.1f} tok/s at these context positions, with the "
                         "window idle; a reply streaming into the window can run a few percent below that.")
    elif stats.used_draft:
        lines.append(
            f"Acceptance: {stats.n_accepted} of {stats.n_drafted} drafted tokens were accepted. "
            f"τ: {stats.tau:.2f} tokens per target step on average ({stats.n_draft_steps} draft steps)."
        )
        d = drafting_text(stats)
        if d:
            lines.append(
                f"Draft length: chosen each step from the measured cost of drafting and verifying on this "
                f"machine and how often drafts were accepted ({d}); a plain step drafts nothing."
            )
        b = baseline_tps(stats, baseline)
        if baseline is not None and b:
            lines.append(_baseline_line(stats, baseline, b))
        else:
            lines.append("The speedup appears once the target-only speed on this machine is measured (done once, "
                         "automatically, after the model loads).")
    if stats.device:
        lines.append(f"Device: {stats.device}.")
    return "\n".join(lines)


def _baseline_line(stats: ReplyStats, baseline: TargetSpeed, b: float) -> str:
    first, last = TargetSpeed.positions(stats.n_prompt, stats.n_generated)
    measured = f"{baseline.tokens_per_second:.1f} tok/s after a short prompt"
    if baseline.far_depth:
        far = baseline.tokens_per_second_at(baseline.far_depth)
        measured += f" and {far:.1f} tok/s {baseline.far_depth:.0f} tokens into a chat"
    return (f"Speedup against the target alone on this machine at this reply's context positions ({first}-{last}): "
            f"{b:.1f} tok/s (measured: {measured}).")
