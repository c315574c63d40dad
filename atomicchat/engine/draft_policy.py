"""How many tokens to draft each DFlash step, chosen from what this engine measures as it runs.

No fixed draft length is right for every model, quant, device and prompt: a verify of k tokens costs
little more than one token on a GPU but up to k times one on a compute-bound CPU quant, and a draft
that does not fit the content is accepted 0% of the time. So each step picks the k (0 = a plain
target step) that maximises expected tokens per second:

    rate(k) = E[tokens | k] / (draft(k) + verify(k + 1) + step)        rate(0) = 1 / (verify(1) + step)
    E[tokens | k] = 1 + sum_{i=1..k} prod_{j=1..i} p_j

where `p_j` is how often draft position j was accepted given j-1 was (the acceptance profile, with
recent steps weighing most), `draft`/`verify` are learned per size from the steps' own timings
(the cost table, kept for the life of the loaded model) and `step` is what every step costs besides
them (the generation loop, detokenizing, handing the tokens on), which a draft step spreads over
all the tokens it yields. When no k beats a plain step the engine takes
plain steps and probes a short draft now and then, spacing the probes out while they keep failing.

Nothing here touches llama.cpp; the engine feeds it timings and counts, which is what the unit tests
replay from recorded traces. Output never depends on the choice: every k is verified by the target.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field


SHIFT_REPLY_STEPS = 16  # the policy's profile looks for shifts in a reply's first 16 draft steps
BEST_ACCEPTANCE = 0.9  # a position's acceptance that drafts reach at best (~tau 8 for a block of 16)


def best_case_tokens(k: int, p_max: float = BEST_ACCEPTANCE) -> float:
    """Expected tokens of a step that drafts k, each position accepted at `p_max`."""
    return (1 - p_max ** (k + 1)) / (1 - p_max)


def _median(xs: list[float]) -> float:
    """statistics.median, without its type dispatch (a few µs a call, every step)."""
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


@dataclass
class CostTable:
    """Seconds per call, by size: the median of the last few observations per size (a size's first
    call also builds its compute graph, 10-50x a normal one, and one such outlier must not decide
    for long), interpolated linearly between observed sizes, flat below the smallest and linear
    beyond the largest."""

    keep: int = 5
    drop_first: bool = True  # False where a first call has no graph to build (whole probe cycles)
    samples: dict[int, list[float]] = field(default_factory=dict)
    values: dict[int, float] = field(default_factory=dict)  # the current estimate of every observed size
    version: int = 0  # bumped by every observation, so callers can cache what they derive
    _warmed: set[int] = field(default_factory=set)
    _eff: dict[int, float] = field(default_factory=dict)
    _eff_version: int = -1
    _memo: dict[float, float | None] = field(default_factory=dict)  # estimates at `_memo_version`
    _memo_version: int = -1

    def observe(self, n: int, seconds: float) -> None:
        if seconds <= 0:
            return
        xs = self.samples.setdefault(n, [])
        if len(xs) == 1 and n not in self._warmed and self.drop_first:  # a first call built its graph: dropped
            self._warmed.add(n)
            xs.clear()
        xs.append(seconds)
        if len(xs) > self.keep:
            del xs[0]
        self.values[n] = _median(xs)
        self.version += 1

    def _effective(self) -> dict[int, float]:
        """The prices estimates rest on: every settled size, and sizes priced by a first call alone
        only outside the settled range (nothing settled: every price). Cached by `version`."""
        if self._eff_version != self.version:
            settled = {m: v for m, v in self.values.items() if not self.provisional(m)}
            if settled:
                lo, hi = min(settled), max(settled)
                settled.update({m: v for m, v in self.values.items() if m < lo or m > hi})
            self._eff, self._eff_version = settled or self.values, self.version
        return self._eff

    def count(self, n: int) -> int:
        return len(self.samples.get(n, ()))

    def scale(self, sizes: set[int], factor: float) -> None:
        """Every sample of `sizes` times `factor` (prices timed when everything ran slower)."""
        for n in sizes & self.samples.keys():
            xs = self.samples[n] = [x * factor for x in self.samples[n]]
            self.values[n] = _median(xs)
        self.version += 1

    def provisional(self, n: int) -> bool:
        """Whether size n's only price is its first call (a graph build, or a switch from another
        size): one the table cannot yet tell from an outlier."""
        return self.drop_first and n not in self._warmed and len(self.samples.get(n, ())) == 1

    def estimate(self, n: float) -> float | None:
        """Size n's price (n may fall between sizes: a cut step's mean rows): its own once past its
        first call; a size priced by its first call alone is interpolated between settled sizes on
        either side where there are such (a one-off switch into a size priced it at its graph
        build, up to 3-4x a run's step, and a size that looks that dear is never run long enough to
        be priced again: demo F32's length 3, the best fixed length, went unused at 5.4 ms a draft
        where lengths 2 and 4 cost 1.2 and 1.6).
        Memoized until the next observation: a decision asks for ~40 prices, and deriving each
        anew cost ~25 µs a step, ~0.7% of a demo F32 step."""
        if self._memo_version != self.version:
            self._memo, self._memo_version = {}, self.version
        memo = self._memo
        if n not in memo:
            memo[n] = self._estimate(n)
        return memo[n]

    def _estimate(self, n: float) -> float | None:
        values = self.values
        if not values:
            return None
        if n in values and not self.provisional(n):
            return values[n]
        values = self._effective()
        if n in values:
            return values[n]
        sizes = sorted(values)
        i = bisect.bisect_left(sizes, n)
        if i == 0:
            return values[sizes[0]]  # smaller calls cost at least nothing less (memory-bound)
        if i == len(sizes):
            hi = sizes[-1]
            if len(sizes) >= 2:
                lo = sizes[-2]
                slope = max(0.0, (values[hi] - values[lo]) / (hi - lo))
            else:
                slope = values[hi] / hi  # one point: assume proportional (compute-bound)
            return values[hi] + slope * (n - hi)
        lo, hi = sizes[i - 1], sizes[i]
        w = (n - lo) / (hi - lo)
        return values[lo] * (1 - w) + values[hi] * w


@dataclass
class AcceptanceProfile:
    """P(position j accepted | j-1 accepted), j = 1..k_max, from decayed success/trial counts.

    A position with few trials leans on its neighbour (a prior worth `prior_weight` trials, centred
    on p_{j-1}), so lengths not tried lately are neither written off nor oversold."""

    k_max: int
    decay: float = 0.99  # per observed draft step: ~100 steps of memory
    prior_weight: float = 2.0
    first_prior: float = 0.5
    # What the draft accepts changes with the content (code, then a list or a paragraph about it),
    # faster than ~100 steps of memory follow: when the first drafted token's hits over the last
    # `shift_window` draft steps are improbable under the first position's estimate from the history
    # before them (a binomial tail below `shift_alpha`, either way), that history keeps only
    # `shift_keep` of its weight. SmolLM2 F32 on a 2-core EPYC, 2026-12-06: the first lists reply after
    # six code replies drafted 22 steps at ~0.3 first-token acceptance (break-even ~0.55) before going
    # plain, 0.88x of target-only. Replayed on that machine's costs (64 seeds of 6 code, 6 lists and
    # 6 prose replies, each cost +-8% noise): lists 0.951 -> 0.974x of target-only, code 1.094 ->
    # 1.092x, prose 0.995 -> 0.999x. A window of 12 at 0.002 takes a steady draft for a change ~once in
    # 1,000 draft steps (8 at 0.01: up to once in 80) and sees 72% -> 30% after a median 13 steps.
    shift_window: int = 12
    shift_alpha: float = 0.002
    shift_keep: float = 0.1
    # Shifts are looked for only in a reply's first `shift_reply_steps` draft steps (`begin_reply`;
    # 0: in every step). What a reply is about is set by its prompt; within a reply the draft's dips
    # do not last. Demo F32 per-position traces (benchmarks/position_trace.py, adaptive_bench's
    # prose prompts, 2-core EPYC, 2026-12-08): windows of 12 length-7 draft steps whose first tokens
    # were accepted 0.46 of the time (0.877 overall) were followed by 12 at 0.94. Taken for changes,
    # they cut the history 4-8 times in 18 replies, and the policy went plain on 26% of steps at
    # 0.949x of the best fixed length (benchmarks/content_sim.py, a plain step 1.95 ms, 8 seeds);
    # with this, no cut, 9% plain, 0.971x. A change of content with the next prompt is still seen
    # within a reply's first steps (`test_a_change_from_code_to_a_list_goes_plain_twice_as_soon`).
    shift_reply_steps: int = 0
    _reply_steps: int = 0
    success: list[float] = field(default_factory=list)
    trials: list[float] = field(default_factory=list)
    version: int = 0
    shifts: int = 0  # changes detected (for tests and benchmarks)
    _recent: list[tuple[int, int]] = field(default_factory=list)  # (k, accepted) of the last draft steps
    _p: list[float] = field(default_factory=list)
    _p_version: int = -1

    def __post_init__(self) -> None:
        self.success = [0.0] * (self.k_max + 1)
        self.trials = [0.0] * (self.k_max + 1)

    def observe(self, k: int, n_accepted: int) -> None:
        """A draft of k tokens of which the first n_accepted matched the target."""
        self.fade(self.decay)
        self._count(k, n_accepted, 1.0)
        self._reply_steps += 1
        if k >= 1 and self.shift_alpha > 0 and self._shifted(k, n_accepted):
            # the history before the window keeps `shift_keep` of its weight, the window all of its own
            window, self._recent = self._recent, []
            self.fade(self.shift_keep)
            for kk, nn in window:
                self._count(kk, nn, 1.0 - self.shift_keep)
            self.shifts += 1

    def begin_reply(self) -> None:
        """A reply starts: its first `shift_reply_steps` draft steps may show a shift, against a
        window of its own steps (the last reply's, carried over, would judge that reply again)."""
        self._reply_steps = 0
        self._recent = []

    def fade(self, factor: float) -> None:
        """Scale every count by `factor` (< 1: the history weighs less: a draft step's decay, a
        shift's cut, a reply's fade of the openings' counts)."""
        self.success = [s * factor for s in self.success]
        self.trials = [t * factor for t in self.trials]
        self.version += 1

    def _count(self, k: int, n_accepted: int, weight: float) -> None:
        for j in range(1, min(n_accepted + 1, k) + 1):
            self.trials[j] += weight
            if j <= n_accepted:
                self.success[j] += weight

    def _shifted(self, k: int, n_accepted: int) -> bool:
        """Add a draft step to the window; True when the window's first-token hits are improbable
        under the first position's estimate from the history before the window."""
        w = self._recent
        w.append((k, n_accepted))
        if len(w) > self.shift_window:
            del w[0]
        n = len(w)
        if n < self.shift_window or 0 < self.shift_reply_steps < self._reply_steps:
            return False
        h = sum(1 for _, a in w if a >= 1)
        t = self.trials[1] - n  # the window's steps weigh ~1 each (decayed by < 1 - decay**n)
        if t < n:  # too little history to contradict
            return False
        s = min(max(0.0, self.success[1] - h), t)
        m = self.prior_weight
        p = (s + m * self.first_prior) / (t + m)
        odds, pmf = p / (1.0 - p), [(1.0 - p) ** n]  # binomial(n, p), term by term (~1 us, not ~5)
        for i in range(n):
            pmf.append(pmf[-1] * odds * (n - i) / (i + 1))
        return min(sum(pmf[: h + 1]), sum(pmf[h:])) < self.shift_alpha

    def p(self) -> list[float]:
        """p[j] for j = 1..k_max (index 0 unused, 1.0). Cached until the next observation (callers
        must not change the list)."""
        if self._p_version == self.version:
            return self._p
        out = [1.0]
        prev = self.first_prior
        for j in range(1, self.k_max + 1):
            m = self.prior_weight
            pj = (self.success[j] + m * prev) / (self.trials[j] + m)
            out.append(pj)
            prev = pj
        self._p, self._p_version = out, self.version
        return out

    def upper(self, z: float, cap: float = 1.0) -> list[float]:
        """p[j] raised by z standard errors of its (decayed, prior-padded) trials, to `cap` at most
        (or p[j] where that is higher): what the draft could plausibly accept, for deciding whether
        a probe has seen enough to stop."""
        out = list(self.p())
        for j in range(1, self.k_max + 1):
            n = self.trials[j] + self.prior_weight
            pj = out[j]
            out[j] = max(pj, min(cap, pj + z * (pj * (1.0 - pj) / n) ** 0.5))
        return out

    def expected_tokens(self, k: int, p: list[float] | None = None) -> float:
        return self.expected_all(k, p)[k]

    def expected_all(self, limit: int, p: list[float] | None = None) -> list[float]:
        """Expected tokens of a step that drafts k, for k = 0..limit, in one pass."""
        p = p or self.p()
        out, total, run = [1.0], 1.0, 1.0
        for j in range(1, limit + 1):
            run *= p[j]
            total += run
            out.append(total)
        return out


@dataclass
class DraftPolicy:
    """Chooses k each step and learns from what the step cost and how much of it was accepted."""

    k_max: int
    explore_every: int = 16  # draft steps between tries of a neighbouring length
    probe_first: int = 16  # plain steps before the first probe, doubled after each failed probe
    probe_max: int = 256
    explore_within: float = 0.8  # neighbours tried only when their expected rate is this close
    close_call: float = 0.85  # a probe within this share of a plain step's rate keeps probing often
    warm: int = 16  # plain steps before a probe that feed the draft again (its recent context)
    explore_budget: float = 0.015  # share of a plain run's time that its probes may cost at most
    close_budget: float = 0.1  # the same after a probe that came close to paying
    close_decay: float = 1.5  # close_budget is divided by this for each further close call that did not pay
    probe_cap: int = 2048  # plain steps between probes at the most, whatever a probe costs
    # Seconds of plain steps before a loaded model's first draft step at the most, when the load priced
    # a verify of n rows above n one-row decodes (which batching never costs: the load was timed on a
    # busy machine, `_load_implausible`). The first probe's live prices then correct the load's
    # (`_check_load_price`). In plain steps: demo F32 ~600 on this CPU, SmolLM2 Q4_1 ~60-100.
    first_probe_seconds: float = 1.0
    # A draft none of whose tokens was ever accepted (a mismatched pair): each probe that saw none
    # divides the probe budget by this and multiplies the cap, up to `never_most` times.
    never_decay: float = 2.0
    never_most: float = 8.0
    # Probes are worth what drafting could gain at best: where no length beats a plain step by more
    # than `upside_full` even at the best acceptance drafts reach (a compute-bound CPU quant: SmolLM2
    # Q4_1 on one core, ~5%), a plain run's probe budget shrinks in proportion, to `upside_floor` of
    # itself at the least. The close-call budget does not: after a burst of load made drafting dear
    # for a while, the gain looks small on those prices, and close calls are how drafting resumes.
    upside_full: float = 0.15
    # The sweep drafts a length only where, at `BEST_ACCEPTANCE`, it could beat a plain step by this
    # share: below it, what the sweep could find is worth less than its steps cost in a short first
    # reply (SmolLM2 Q4_1 on 2 threads: lengths 2-4 could gain 7-13% at 90% a position, and the
    # sweep's six draft steps and what followed them made the first reply 0.86x of target-only).
    # Probes, paced by their budget, still learn the draft's acceptance there; where a length could
    # still gain `early_upside`, the first of them comes early (`_gap`).
    sweep_upside: float = 0.25
    early_upside: float = 0.15
    upside_floor: float = 0.125
    probe_steps: int = 2  # draft steps of one length a probe makes: the first pays the graph switch
    leave_after: int = 3  # draft steps in a row that plain must look best for before a drafting run ends
    run_paid: int = 32  # decisions a drafting run must last for its end to count as drafting having paid
    rollback_evidence: int = 2  # draft steps, none of it accepted, before a hybrid target drops its snapshots
    optimism: float = 1.0  # a probe goes on while a draft could pay at acceptance this many standard errors up
    probe_most: int = 12  # draft steps a probe makes at the most when it goes on
    bare_every: int = 64  # unfed plain steps per one whose cost is sampled (and the policy is asked)
    # Draft decisions after a load before plain steps (`check_most` at the most) check a plain step's price, while that price
    # is still the load's alone (`_plain_check_due`). The load prices in 0.1-2 s on a throwaway
    # prompt; a machine busy then prices a plain step 2-4x dearer than it runs (demo F32, 2-core
    # Xeon, three busy processes during the load: 5.8 ms against 1.6), and a drafting policy never
    # takes the plain steps that would price it again: simulated where drafting loses at every length,
    # a load that priced plain steps 2-3x dear drafted 99% of 6,000 tokens at 0.56-0.68x of target-only
    # (0.98x with the check); on demo F16 with its load's plain prices made 3x, 12 replies ran at
    # 0.55-0.72x of target-only without it and 0.90x with it (the first 64 draft decisions drafted).
    plain_check: int = 64
    # Plain steps a check takes: until their price settles (`settled`), at most `check_most`. Right
    # after draft steps a plain step runs slow for a while: on demo F32 (2-core Xeon whose shared L3
    # holds the model, 2026-12-07 evening) ~2x for ~10 steps; a check of 4 steps priced plain at
    # ~4 ms where target-only ran 2.0-2.2, and 12 replies drafted ~90% of their steps at 0.87-0.94x
    # of target-only.
    check_most: int = 32
    # Steps at a reply's start whose costs may not move a price already known (2+ samples): the
    # caches come back cold from the prefill or from other programs. Interleaved with other engines,
    # demo F32's length-4 steps cost 14, 10, 6 and 2% more as a reply's steps 0-3 than later; priced
    # as they came, the length in use looked dearest at each reply's start and the policy drifted to
    # longer drafts than the best fixed length (mean 4.8 where 3 and 4 were best; 3.3 with this).
    settle: int = 4
    # A reply's first `opening` tokens are drafted by what drafts accepted there (`opening_profile`),
    # not by the rest of the replies: a reply's start is formulaic and drafts accept far more of it.
    # Fixed lengths, 128-token replies, 2-core Xeon, 2026-12-07: demo F32 prose (length 4) 0.98-1.00
    # of drafted tokens over the first 32 tokens, 0.52-0.87 after; code 0.93 against 0.62-0.74;
    # SmolLM2 Q4_1 code (length 2) 0.94, 0.81, 0.79, 0.74 over tokens 0-31 by 8, 0.53-0.79 after. The
    # policy, priced on the whole reply, went plain for good and drafted 2 of ~1,400 steps in those
    # openings, where fixed 4 drafted them at ~1.3x of a plain step. After the prefill the draft has
    # read the whole prompt, so drafting the opening needs no warm-up.
    opening: int = 32
    # Openings are drafted while what they accepted counts fewer than `opening_tries` first tokens
    # (where drafting could pay at all: `_opening_k`), and those counts fade by `opening_fade` a reply:
    # two tries at first, and a draft that did not fit them is tried again ~35 replies on, not never
    # (unless no drafted token of the pair was ever accepted: then the probes' stretch alone).
    opening_tries: float = 1.0
    opening_fade: float = 0.98
    verify: CostTable = field(default_factory=CostTable)  # by tokens decoded: k + 1 (1 = plain step)
    bare: CostTable = field(default_factory=CostTable)  # plain steps that skip feeding the draft
    draft: CostTable = field(default_factory=CostTable)  # by drafted tokens k (draft block + feeding it)
    feed: CostTable = field(default_factory=CostTable)  # a fed plain step: staging its row + its share of the feed
    # a whole probe cycle's time over what its tokens cost at plain steps (size 1)
    cycle: CostTable = field(default_factory=lambda: CostTable(drop_first=False))
    # seconds a step costs outside its timed draft and verify (size 1): after a draft step in `step`,
    # after a plain step in `plain_step`. A plain step hands on one token and, in a plain run, asks
    # the policy nothing: on demo F32 (2-core Xeon, 2026-12-07) 0.07-0.11 ms against 0.16-0.18 ms
    # after a draft step, and a plain step priced with a draft step's looked ~4% dearer than it ran.
    step: CostTable = field(default_factory=lambda: CostTable(keep=15, drop_first=False))
    plain_step: CostTable = field(default_factory=lambda: CostTable(keep=15, drop_first=False))
    profile: AcceptanceProfile = field(init=False)
    # What drafts accepted in replies' openings (`opening`), and only there: the profile and memory
    # learn from the rest, so a formulaic opening does not make the rest of a reply look draftable.
    opening_profile: AcceptanceProfile = field(init=False)
    # The same counts without shifts (`AcceptanceProfile.shift_alpha`): what the draft accepted over
    # its last ~100 draft steps, whatever the content did since. The profile decides drafting runs
    # and whether a probe goes on; a probe's length and price, and whether a probe or a run that
    # ended came close to paying (the budget of the next probe), go by this memory: after a stretch
    # the draft could not fit, probes must still look for what fitted before, or the content that
    # fits, coming back, is found only at the plain-run budget's pace (GPU-like costs, 4 ms a graph
    # switch: 60% of steps drafting after it came back, against 95% with it, 100% without shifts). Whether a probe
    # goes on is the profile's: by the memory, a probe went on into a list for as long as the code
    # before it had been accepted (list replies after code 0.965x, against 0.974x).
    memory: AcceptanceProfile = field(init=False)
    # How far the draft's confidence cut (engine/draft_confidence.py) lets a draft of each length
    # through: P(position j drafted | j-1 was), counted as the acceptance profile counts hits, with
    # a prior of no cut. A step asked to draft k verifies 1 + E[drafted] rows, not k + 1, and its
    # verify is priced so: at full size, a length-6 step of demo F32 (cut to ~4 on average) looked
    # 15% dearer than it ran, and the policy drafted 3-4 where fixed 6 ran faster. No cut: k + 1.
    cuts: AcceptanceProfile = field(init=False)
    _rows_version: int = -1
    _rows: list[float] = field(default_factory=list)
    _spans_key: tuple = ()  # the prices `_span_list` was worked out from (`_spans`)
    _span_list: list[float | None] = field(default_factory=list)
    _decisions: int = 0
    _plain_run: int = 0
    _probe_gap: int = 0
    _probing: bool = False
    _probe_k: int = 0  # the length the probe under way drafts
    _probe_left: int = 0  # its steps still to come
    _probe_made: int = 0  # draft steps the probe under way has made
    _probe_acc: int = 0  # drafted tokens it saw accepted
    _deep_plain: bool = False
    _best_key: tuple = ()
    _sweep: list[int] | None = None
    _swept: int = 1  # the longest size the sweep has priced
    _fast_plain: int = 0  # plain steps left that need no decision (unfed, before the next warm-up)
    _gap_open: bool = False  # plain steps since the draft was last fed skipped feeding it (`record`)
    _bare_seen: int = 0  # unfed plain steps so far (every `bare_every`th is priced)
    _best_k: int = 0
    _tried: dict[int, int] = field(default_factory=dict)  # draft steps recorded, by length
    _probes: int = 0  # probes made (the first may come early: `_gap`)
    _cycle: list[float] | None = None  # [seconds, tokens] of the probe cycle under way (warm-up to after)
    _cycle_closing: bool = False  # the probe is in: the next step (its graph switch back) ends the cycle
    _close: bool = False  # the last probe came within close_call of a plain step: not held to the budget
    _close_fails: int = 0  # close calls in a row that did not pay: each shrinks close_budget
    _last_k: int = -1  # the size of the step recorded last (-1: none yet)
    _last_asked: int = -1  # the length it asked for (its draft block), which a confidence cut may shorten
    _in_run: bool = False  # the last decision drafted because drafting looked best (not a probe or sweep)
    _leave_votes: int = 0  # decisions in a row, in such a run, where a plain step looked best
    _run_len: int = 0  # decisions the drafting run under way (or the last one) has made
    _reply_step: int = 0  # steps of the reply under way so far (the first `settle` are cold)
    _reply_tokens: int = 0  # tokens of the reply under way so far (its `opening` first are apart)
    _opening_on: bool = False  # the reply's opening may still be drafted (`_opening_k`)
    _opening_step: bool = False  # the step chosen last drafts the opening (`record`)
    _verify1_loaded: bool = False  # a fed plain step's price is the load's alone (`calibrate`)
    _bare1_loaded: bool = False  # the same for an unfed one (`calibrate_bare`)
    _since_load: int = 0  # draft decisions since the load's pricing
    # Draft-step sizes whose prices are still the load's alone: verify sizes (k + 1) and draft lengths
    # (`_check_load_price`).
    _loaded_verify: set[int] = field(default_factory=set)
    _loaded_draft: set[int] = field(default_factory=set)
    _check_left: int = 0  # plain steps of a plain-price check still to take
    _check_seen: list[float] | None = None  # the steady prices of the check under way (None: none)

    def __post_init__(self) -> None:
        self.profile = AcceptanceProfile(self.k_max, shift_reply_steps=SHIFT_REPLY_STEPS)
        self.memory = AcceptanceProfile(self.k_max, shift_alpha=0.0)
        self.opening_profile = AcceptanceProfile(self.k_max, shift_alpha=0.0)
        self.cuts = AcceptanceProfile(self.k_max, shift_alpha=0.0, first_prior=1.0)
        self._probe_gap = self.probe_first

    # ------------------------------------------------------------------ model
    def rate(self, k: int, p: list[float] | None = None) -> float | None:
        """Expected tokens per second of a step that drafts k (None: a cost is still unknown)."""
        if k == 0:  # staying plain means not feeding the draft: the cheaper step, once measured
            v = self.verify.estimate(1)
            if self.bare.count(1) >= 3:
                # The same decode as a fed plain step's (the feeding is timed apart), minus what the
                # feeding does to the caches: never dearer. A bare price can go stale where the
                # policy never goes deep into a plain run (unfed steps are what price it): SmolLM2
                # F32, 2026-12-06, the load's calibration priced it at 32 ms where fed plain steps
                # took 25.5, and drafting length 1 at 0.84-0.95x of target-only looked better.
                b = self.bare.estimate(1)
                v = b if v is None else min(v, b)
            return 1.0 / (v + self._plain_step_cost()) if v else None
        return self._draft_rate(k, self.profile.expected_tokens(k, p))

    def _draft_rate(self, k: int, tokens: float) -> float | None:
        """Tokens per second of a step that drafts k and yields `tokens` (None: a cost is unknown)."""
        span = self._spans()[k]
        return None if span is None else tokens / span

    def prepare(self) -> None:
        """Work out what the prices just set imply (each length's step, the best length) before a
        step needs it: otherwise the first decision after a pricing does it inside a reply
        (adaptive_bench prices every engine again before each prompt). Only caches are filled: no
        decision changes."""
        self.best(self.k_max)

    def _spans(self) -> list[float | None]:
        """Seconds of a step that drafts k, for k = 0..k_max (0 unused; None: a cost is unknown):
        its verify, its draft and what every step costs besides. Cached until one of those prices
        changes: a decision weighs a few dozen rates, and looking each one's prices up anew was most
        of a decision after a new pricing (tiny-qwen35, where a plain step takes ~0.3 ms: 171 us,
        since adaptive_bench prices every engine again before each prompt)."""
        key = (self.verify.version, self.draft.version, self.cuts.version, self.step.version)
        if key != self._spans_key:
            step, out = self._step_cost(), [None]
            for k in range(1, self.k_max + 1):
                v, d = self._verify_cost(k), self.draft.estimate(k)
                out.append(None if v is None or d is None else v + d + step)
            self._spans_key, self._span_list = key, out
        return self._span_list

    def _verify_cost(self, k: int) -> float | None:
        """The verify of a step asked to draft k: at the rows the confidence cut lets through on
        average (`cuts`), a fraction the cost table interpolates; k + 1 rows where nothing was cut."""
        if self._rows_version != self.cuts.version:
            self._rows, self._rows_version = self.cuts.expected_all(self.k_max), self.cuts.version
        return self.verify.estimate(min(self._rows[k], k + 1.0))

    def _best_case_rate(self, k: int, p_max: float = BEST_ACCEPTANCE) -> float | None:
        """Tokens per second of a step that drafts k, each position accepted at `p_max`."""
        return self._draft_rate(k, best_case_tokens(k, p_max))

    def _step_cost(self) -> float:
        """What a draft step costs besides its draft and verify (0 until measured)."""
        return self.step.values.get(1, 0.0)

    def _plain_step_cost(self) -> float:
        """What a plain step costs besides its decode: as measured after plain steps once one was
        (`plain_step`), else a draft step's (dearer: it never makes plain look cheaper than it is).
        Deep in a plain run only the step after each coasted stretch is asked, so a whole plain reply
        of demo F32 measured one or two; until a third, a draft step's made plain look 5-14% dear."""
        if self.plain_step.count(1) >= 1:
            return min(self.plain_step.values[1], self._step_cost() or self.plain_step.values[1])
        return self._step_cost()

    def best(self, limit: int) -> int:
        """The k in 0..limit with the highest expected rate (ties: the shorter draft). Cached until
        a cost or the profile changes: a plain step of a small model takes a few hundred µs, and
        re-deriving every rate each step would cost a good share of it."""
        key = (limit, self.verify.version, self.draft.version, self.profile.version, self.bare.version,
               self.cuts.version)
        if key == self._best_key:
            return self._best_k
        self._best_key, self._best_k = key, self._best(limit)
        return self._best_k

    def _best(self, limit: int) -> int:
        tokens = self.profile.expected_all(limit)
        best_k, best_r = 0, -1.0
        for k in range(0, limit + 1):
            r = self.rate(0) if k == 0 else self._draft_rate(k, tokens[k])
            if r is not None and r > best_r * 1.0001:
                best_k, best_r = k, r
        return best_k

    # ------------------------------------------------------------------ decisions
    def choose(self, limit: int) -> int:
        """How many tokens to draft now, at most `limit` (which may be 0: then a plain step)."""
        if self._opening_on and limit > 0 and (k := self._opening_k(limit)):
            return k
        if self._fast_plain > 0 and limit > 0:  # deep in a plain run: nothing to weigh until the probe
            self._pass_fast_plain()
            return 0
        limit = min(limit, self.k_max)
        if limit <= 0:
            return 0
        self._decisions += 1
        if self._probe_left > 0:  # the probe's next step, at its length: priced without a switch
            self._probe_left -= 1
            return min(limit, self._probe_k)
        if self._check_left > 0:  # a plain-price check's next step (all but its first are steady)
            self._check_left -= 1
            return 0
        self._probing = False
        self._deep_plain = False
        k = self._sweep_next(limit)
        if k is not None:
            return k
        k = self.best(self.k_max)  # what pays with no cap: the reply's end and the context cap `limit`
        if k > limit:
            # A capped step is no verdict on drafting: the best length that fits, or a fed plain
            # step that leaves the plain-run bookkeeping alone (counted as one, the last steps of a
            # reply started the next reply with a run of unfed plain steps).
            k = self.best(limit)
            if k == 0:
                return 0
        if k == 0 and self._in_run:
            if self._leave_votes < self.leave_after:
                self._leave_votes += 1
                return max(1, min(limit, self._best_draft(limit)))
            self._leave_run()
        self._leave_votes = 0
        if k == 0:
            self._plain_run += 1
            gap = self._gap(limit)
            if self._plain_run > gap - self.warm and self._cycle is None and self.warm:
                # The gap moves with a noisy plain price; when it shrinks into or past the warm-up
                # (or a coasted stretch, priced every `bare_every` steps, ran into it), the whole
                # warm-up comes first (probes of an unfed draft came cold, and uncounted: on
                # tiny-qwen35 no probe cycle was ever measured, and the gap stayed at 70-390 plain
                # steps where a measured cycle puts it at the 2,048 cap).
                self._plain_run = max(0, gap - self.warm)
            if self._plain_run >= gap:  # cheap probe: the best draft the model knows
                return self._start_probe(limit)
            ahead = gap - self._plain_run - self.warm  # unfed plain steps before the warm-up
            self._deep_plain = ahead > 0
            if self._deep_plain and not self._cycle_closing:
                self._cycle = None  # a warm-up the grown gap cut short: it starts again before the probe
            elif self._cycle is None:
                self._cycle = [0.0, 0.0]  # the warm-up starts a probe cycle
            self._fast_plain = max(0, ahead - 1)
            return 0
        self._plain_run = 0
        self._probe_gap = self.probe_first
        if not self._in_run:
            self._in_run, self._run_len = True, 0
        self._run_len += 1
        if self._decisions % self.explore_every == 0 and k < limit:
            # One longer, for the odds of the position past k: drafts of k already show those of
            # 1..k, so a shorter draft or a plain step would teach nothing (their prices come from
            # runs, not from a step that switches size) and cost two graph switches (on an H200,
            # ~0.5 ms each against a 0.2 ms plain step). Only when it could be near the best.
            if (self.rate(k + 1) or 0.0) >= self.explore_within * (self.rate(k) or 0.0):
                return k + 1
        if self._plain_check_due():
            self._check_left, self._since_load, self._check_seen = self.check_most - 1, 0, []
            return 0
        return k

    def _end_check(self) -> None:
        """A plain-price check's last step: the median of its last `CHECK_WINDOW` steady prices (its
        first steps come right after draft steps, slower) replaces the load's when far below it, and
        then those prices alone stand."""
        seen, self._check_seen = self._check_seen or [], None
        if not seen:  # none was steady and warm enough to price (a reply's cold first steps)
            return
        self._verify1_loaded = False
        last = seen[-CHECK_WINDOW:]
        if _drop_if_off(self.verify, 1, _median(last)):
            for x in last:
                self.verify.observe(1, x)

    def _plain_check_due(self) -> bool:
        """Whether a drafting run should take plain steps now, until their price settles (all but the
        first, after one of their own size, are steady prices): `plain_check` draft decisions after a load whose
        fed plain-step price no live step has replaced (`record`, `_end_check`)."""
        self._since_load += 1
        return self._verify1_loaded and self._since_load >= self.plain_check

    def _leave_run(self) -> None:
        """A drafting run ends: plain looked best `leave_after` + 1 decisions in a row. Near a tie the
        prices behind that verdict are noisy (a step's cost moved by +-10-20% with a neighbour on the
        other core), and each wrong turn to plain used to last a whole probe gap at the 1.5% budget,
        ~170 plain steps on demo F16, where length 3 ran at 1.13x of plain steps in the same
        engine: adaptive 0.90x of it. Going plain on one noisy verdict, coming back only through a
        probe, kept the policy plain far more than drafting lost. So a run ends only on a verdict
        that holds, and when its draft was still close to paying, the first probe comes as after a
        close call."""
        self._in_run = False
        self._close = self._came_close()
        if self._run_len >= self.run_paid:  # a run that held: drafting paid, close calls start over
            self._close_fails = 0
        else:  # a short run counts as a close call that did not pay (SmolLM2: 0.95x with runs left out)
            self._close_fails = self._close_fails + 1 if self._close else 0

    def begin_reply(self) -> None:
        """A reply starts: its first `settle` steps price only sizes with fewer than two samples, and
        its opening may be drafted apart from the rest (once the sweep is done, outside a drafting run)."""
        self._reply_step = self._reply_tokens = 0
        self.profile.begin_reply()
        self._opening_on = self.opening > 0 and self._sweep == [] and not self._in_run
        if self._ever_accepted():  # else no try could pay
            self.opening_profile.fade(self.opening_fade)

    def _opening_k(self, limit: int) -> int:
        """The length to draft in the reply's opening, 0 when the opening is over: its `opening`
        tokens are past, a probe, check or drafting run is under way, or no length beats a plain step
        at what the openings accepted, `optimism` standard errors up. While the openings have shown
        fewer than `opening_tries` first tokens (faded: `opening_fade`), that some length could pay at
        the best acceptance drafts reach is enough: one unlucky first try must not close them for
        good. A try drafts a probe's length (by `memory`), short where the draft fits the rest poorly: SmolLM2
        Q4_1 prose tried at the best acceptance's length (7, ~4.5 plain steps a step) ran ~1% slower
        over 6 replies than with no openings drafted."""
        if self._reply_tokens >= self.opening or self._in_run or self._probe_left or self._check_left:
            self._opening_on = False
            return 0
        plain, limit = self.rate(0), min(limit, self.k_max)
        if self.opening_profile.trials[1] < self.opening_tries:  # a try, where any length could pay
            k = self._probe_length(limit)  # a try that fails costs little
            pays = plain is not None and self._upside(plain) > 0
        else:
            p = self.opening_profile.upper(self.optimism, BEST_ACCEPTANCE)
            k = self._best_draft(limit, p)
            pays = plain is not None and (self.rate(k, p) or 0.0) > plain
        if not pays:
            self._opening_on = False
            return 0
        self._opening_step = True
        return k

    def _probe_length(self, limit: int, recall: list[float] | None = None) -> int:
        """A probe's length (also an opening's try, and what `_gap` prices a probe at): the best
        draft by what the draft accepted lately (`memory`, or `recall`, its `p()`), 1 to `limit`."""
        return max(1, min(limit, self._best_draft(limit, self.memory.p() if recall is None else recall)))

    def _start_probe(self, limit: int) -> int:
        """A probe starts: `probe_steps` draft steps of the best length by what the draft accepted
        lately (`memory`), then its verdict (`record`)."""
        self._probing = True
        self._probe_k = self._probe_length(limit)
        self._probe_left = self.probe_steps - 1
        self._probe_made = self._probe_acc = 0
        return self._probe_k

    @staticmethod
    def _prices(table: CostTable, n: int, steady: bool, cold: bool) -> bool:
        """Whether a step's cost may move `table`'s price of size n: always while the size has no
        price; else only a step of the same size as the one before (`record`), and not one of a
        reply's cold first steps (`settle`) once the size has two samples."""
        count = table.count(n)
        return not count or (steady and not (cold and count >= 2))

    def coast(self, limit: int) -> int:
        """How many plain steps, this one first, lie deep in a plain run with nothing to decide, feed
        or price (0: ask). The engine takes them without calling the policy (`choose`,
        `needs_features`, `record`, nor this): on a toy target (~0.1 ms a step) those calls were 2-3%
        of a plain step, and one call a step here still 1-2%. Every `bare_every`th such step is still
        priced (the `bare` sample), and a probe cycle being closed is never coasted through. Steps
        granted but not taken (the reply ended) go back through `uncoast`."""
        if (self._fast_plain > 0 and limit > 0 and self._cycle is None and not self._bare_due()
                and not self._opening_on):
            n = min(self._fast_plain, -self._bare_seen % self.bare_every)
            self._advance_plain(n)
            return n
        return 0

    def uncoast(self, n: int) -> None:
        """Give back n coasted steps granted by `coast` but not taken."""
        self._advance_plain(-n)

    def _advance_plain(self, n: int) -> None:
        """Count n coasted steps (negative: given back): passed as `choose` would, then as `record`
        counts an unfed plain step."""
        self._pass_fast_plain(n)
        self._bare_seen += n
        self._reply_step += n
        self._reply_tokens += n
        if n > 0:
            self._gap_open = True

    def _pass_fast_plain(self, n: int = 1) -> None:
        """Count n plain steps deep in a plain run, before the next warm-up."""
        self._fast_plain -= n
        self._plain_run += n
        self._decisions += n

    def _bare_due(self) -> bool:
        """Whether the next unfed plain step is one whose cost is sampled (every `bare_every`th: a
        plain step's cost hardly moves)."""
        return self._bare_seen % self.bare_every == 0

    def _gap(self, limit: int) -> int:
        """Plain steps before the next probe: the learned gap (doubled by failed probes), but never
        so short that a probe cycle (its warm-up feeding and the probe's extra time over plain
        steps) costs more than `explore_budget` of the plain run. Where a probe is dear next to a
        plain step (on a GPU a 9M-parameter target step takes 0.23 ms and a 1-token draft step,
        with its graph switches, 2 ms) probes become rare; where it is cheap nothing changes. When
        the last probe came close to paying (within `close_call`), probes may cost `close_budget`
        instead: near break-even this machine's noise decides, and a policy left plain by it stayed
        plain for whole replies (demo F32 code, 95% plain at 0.82x of the best fixed length, where
        length 5 ran at 1.24x of target-only); with no budget at all there, the fed warm-ups and
        probes cost demo Q8_0 prose a third of its speed. Close calls that keep failing shrink that
        budget (by `close_decay` each), so a draft just short of paying does not cost up to 10% for
        good. The first probe of a loaded model comes after `probe_first` plain steps all the same
        when the sweep saw a drafted token accepted (the draft fits; a reply's opening is a poor
        sample of the rest), or drafted nothing though a length could gain `early_upside` at the best
        acceptance drafts reach (below the sweep's margin: demo F32's loads price that gain at
        25-42%, and fixed 4 runs at 1.2x of target-only; with the sweep left out, its first probe
        came ~150 steps in, and adaptive_bench's code and prose cells ran at 0.83-0.91x of fixed 4,
        against 0.93-0.98x with this early probe). When it saw none, or drafted nothing because
        no length could gain that much, that probe keeps to the budget too: the early probes of a
        draft that fits nothing cost ~3% of a 768-token run on a small model. While no drafted
        token of the pair was ever accepted, each probe stretches the budget and cap (`never_decay`,
        up to `never_most`): at the cap, tiny-qwen35's probes cost ~2.3% of the run (0.95x of
        target-only; 0.97-0.98x with the stretch, 30 x 6 replies)."""
        plain = self.rate(0)
        if not plain or self.explore_budget <= 0:
            return self._probe_gap
        upside = self._upside(plain)
        if not self._probes and (self.profile.success[1] > 0 or (not self._tried and upside >= self.early_upside)):
            return self._probe_gap  # the first probe comes early
        budget, cap = self.explore_budget * self._upside_share(upside), self.probe_cap
        if self.first_probe_seconds > 0 and not self._tried and self._load_implausible():  # 0: off
            cap = min(cap, max(self.probe_first, int(self.first_probe_seconds * plain)))
        if self._close:  # close: may pay again soon
            budget = max(budget, self.close_budget / self.close_decay ** max(0, self._close_fails - 1))
        elif self._probes and self.profile.success[1] == 0:  # never one drafted token accepted
            stretch = min(self.never_most, self.never_decay ** self._probes)
            budget, cap = budget / stretch, int(cap * stretch)
        recall = self.memory.p()
        k = self._probe_length(limit, recall)
        v, d = self._verify_cost(k), self.draft.estimate(k)
        if v is None or d is None:
            return self._probe_gap
        f = self.feed.estimate(1) or 0.0
        probe_step = v + d + self._step_cost()
        extra = self.probe_steps * (probe_step - self.memory.expected_tokens(k, recall) / plain) + self.warm * f
        measured = self.cycle.estimate(1)
        if measured is not None:  # what whole cycles cost, graph switches and gap filling included
            extra = max(extra, measured)
        if extra <= 0:
            return self._probe_gap
        need = int(extra * plain / budget)
        return max(self._probe_gap, min(need, cap))

    def _load_implausible(self) -> bool:
        """Whether the load priced a verify of n rows above n one-row decodes. A batch of n rows
        reads the weights once where n decodes read them n times, so it never costs that much
        (demo F32 on this CPU: 8 rows 3.2x one row; Q8_0 5.5x at 9); such a price was timed while
        something else took the machine (three busy processes at load: 5 rows at 16.6 ms, ~10x one)."""
        ones = [v for v in (self.verify.values.get(1), self.bare.values.get(1)) if v]
        if not ones:
            return False
        one = min(ones)
        return any(self.verify.values.get(n, 0.0) > n * one for n in self._loaded_verify)

    def _upside_share(self, upside: float) -> float:
        """The share of the probe budget that drafting's best case earns: its `_upside` over
        `upside_full`, between `upside_floor` and 1."""
        return min(1.0, max(self.upside_floor, upside / self.upside_full))

    def _upside(self, plain: float) -> float:
        """What the best length could gain over a plain step (`plain` tokens/s) at `BEST_ACCEPTANCE`
        (0.25: 25% faster; negative where no length could pay)."""
        best = max((self._best_case_rate(k) or 0.0 for k in range(1, self.k_max + 1)), default=0.0)
        return best / plain - 1.0

    def _sweep_next(self, limit: int) -> int | None:
        """Once per loaded model, price a few sizes before trusting the table: 1 and a plain step,
        then doubling lengths up to k_max, each twice (a size's first call also builds its graph
        and is dropped). Short drafts are priced by measurement, not interpolated from the longest
        (on compute-bound quants they are the only ones that pay). A longer size is tried only when
        drafts of the previous size were sometimes accepted whole: a draft that is never accepted
        then costs two steps of one token, not three of k_max. When the costs are already known
        (calibrated at load), each size is still drafted twice, for its acceptance, and a size that
        could not beat a plain step even at the best acceptance drafts reach is skipped."""
        if self._sweep is None:
            self._sweep = self.sweep_sizes()
            self._swept = 1
        while self._sweep:
            k = self._sweep[0]
            if k > 1 and self._tried.get(self._swept) and self.profile.success[self._swept] == 0:
                self._sweep = []  # the last length was never accepted whole: longer ones cannot pay
                return None
            if k == 0:
                done = self.verify.count(1) >= 2
            else:  # priced and drafted twice (its acceptance), unless no acceptance could pay
                done = self.draft.count(k) >= 2 and (self._tried.get(k, 0) >= 2 or self._hopeless(k))
            if not done:
                return min(k, limit)
            self._sweep.pop(0)
            self._swept = max(self._swept, k)
        return None

    def _hopeless(self, k: int) -> bool:
        """Whether drafting k fails to beat a plain step by `sweep_upside` even at the best acceptance
        drafts reach (`BEST_ACCEPTANCE` a position, as `longest_useful` sizes the rollback snapshots
        by), its costs known, e.g. from the load-time calibration: the sweep skips such a length. At
        full acceptance instead, the toy pairs' sweeps drafted 15 twice, which pays only above ~97% a position: two steps of ~1.9 ms and a
        graph switch back, against ~0.12 ms plain steps, 2-3% of a 1,536-token benchmark case."""
        best, plain = self._best_case_rate(k), self.rate(0)
        return best is not None and plain is not None and best < plain * (1.0 + self.sweep_upside)

    def sweep_sizes(self) -> list[int]:
        """The sizes the sweep prices, in order: 1, a plain step (0), then doubling lengths to k_max."""
        sizes, k = [1, 0], 2
        while k < self.k_max:
            sizes.append(k)
            k *= 2
        sizes.append(self.k_max)
        return list(dict.fromkeys(sizes))

    def calibrate(self, k: int, draft_seconds: float, verify_seconds: float) -> None:
        """A cost measured outside any reply (the engine prices sizes while the model loads, on a
        throwaway prompt): the cost tables learn it, the acceptance profile does not, since what was
        drafted there says nothing about a conversation. k = 0: a plain step, its decode priced as an
        unfed one and `draft_seconds` as feeding the draft its row. Unpriced at load, feeding was
        first priced by a probe's warm-up, which then raised the probe gap (16 feedings a cycle) past
        the steps already taken, dropped the warm-up and coasted on; where the contexts are made
        again for each reply (adaptive_bench) that came back every reply, and demo F32 prose went
        six replies without a probe (0.85x of fixed 4)."""
        self.verify.observe(k + 1, verify_seconds)
        self._since_load = 0
        if k:
            self.draft.observe(k, draft_seconds)
            self._loaded_verify.add(k + 1)
            self._loaded_draft.add(k)
        else:
            self.bare.observe(1, verify_seconds)
            self.feed.observe(1, draft_seconds)
            self._verify1_loaded = self._bare1_loaded = True

    def calibrate_bare(self, seconds: float) -> None:
        """An unfed plain step timed at load after the fed sizes (`Engine._calibrate`): what a step
        of a plain run costs, which the fed steps before it overprice (feeding the draft takes the
        target's weights out of the caches)."""
        self.bare.observe(1, seconds)
        self._bare1_loaded = True

    def longest_useful(self, p_max: float = BEST_ACCEPTANCE) -> int:
        """The longest draft that could beat a plain step here at the best acceptance drafts reach
        (`p_max` per position, ~tau 8 for a block of 16), by the costs priced so far: past the last
        sweep size that could, up to the next size (lengths between are interpolated). k_max while
        a size or a plain step is unpriced; 0 when no size could."""
        plain = self.rate(0)
        if plain is None:
            return self.k_max
        sizes = [k for k in self.sweep_sizes() if k]
        useful = 0
        for i, k in enumerate(sizes):
            if k not in self.draft.values or k + 1 not in self.verify.values:
                return self.k_max
            if (self._best_case_rate(k, p_max) or 0.0) >= plain:
                useful = sizes[i + 1] - 1 if i + 1 < len(sizes) else k
        return useful

    def rollback_wanted(self, full: int) -> int:
        """How many recurrent-state snapshots a hybrid target should keep now: `full` (what the
        load-time pricing sized) until drafts of this pair were seen rejected outright at least
        `rollback_evidence` times with none of their tokens ever accepted; then none, since no
        length can pay and the snapshots cost every plain step (the Qwen3.5-9B stand-in on an H200:
        0.911x of target-only with 15, 0.996x with none, benchmarks/idle_draft_cost.py). Back to
        `full` as soon as a drafted token is accepted (a draft step rolls back through a checkpoint
        meanwhile, exact but dearer)."""
        if self._ever_accepted():
            return full
        return 0 if sum(self._tried.values()) >= self.rollback_evidence else full

    def _ever_accepted(self) -> bool:
        """Whether a drafted token of this pair was ever accepted, in a reply's opening or after it."""
        return self.profile.success[1] > 0 or self.opening_profile.success[1] > 0

    def forget_plain(self) -> None:
        """Drop what a plain step was seen to cost (the context changed under it)."""
        for table in (self.bare, self.verify):
            _drop(table, 1)
        self._verify1_loaded = self._bare1_loaded = False
        self._replan()

    def _replan(self) -> None:
        """Prices changed: the next plain decision works the probe gap out again. A plain run's
        unfed stretch is granted in one go (`_fast_plain`), from the gap as priced when it began. Kept
        across a new pricing, one pricing that put drafting's best case low (its first probe paced by
        a budget scaled down to `upside_floor`, up to 2,048 steps away) held for the whole stretch,
        whatever the prices said next (`test_a_new_pricing_works_the_probe_gap_out_again`). The likely
        cause of a demo F32 engine in adaptive_bench, whose every prompt is priced anew, drafting
        nothing in 1,953 steps (18 replies) where fixed 4 ran at 1.16x of target-only: seen once,
        reproduced in the simulator, not on the engine."""
        self._fast_plain = 0

    def forget_costs(self) -> None:
        """Drop every size's price, as a new load would have none (`Engine.remake_contexts` with
        `reprice`): on a new context every step may cost something else, and a plain step priced
        anew next to draft sizes priced on the old one made drafting look up to 1.2x cheaper than
        it was (SmolLM2 Q4_1, 2026-12-05: a plain step 10-17 ms across contexts of one engine).
        What the draft was seen to accept, and what a step costs besides its decodes, stay."""
        self.verify, self.draft, self.bare, self.feed = CostTable(), CostTable(), CostTable(), CostTable()
        self._verify1_loaded = self._bare1_loaded = False
        self._loaded_verify, self._loaded_draft = set(), set()
        self._best_key = self._spans_key = ()
        self._replan()

    def _came_close(self) -> bool:
        """Whether the best draft, at what the draft accepted lately (`memory`), is within
        `close_call` of a plain step's rate."""
        p = self.memory.p()
        plain, draft = self.rate(0) or 0.0, self.rate(self._best_draft(self.k_max, p), p) or 0.0
        return draft >= self.close_call * plain

    def _best_draft(self, limit: int, p: list[float] | None = None) -> int:
        tokens = self.profile.expected_all(limit, p)
        rates = [(self._draft_rate(k, tokens[k]) or 0.0, -k) for k in range(1, limit + 1)]
        return -max(rates)[1]

    def needs_features(self) -> bool:
        """Whether the plain step just chosen must feed the draft (False deep in a plain run: the
        draft's context then has gaps, which costs a probe some acceptance, never correctness)."""
        return not self._deep_plain

    def overhead(self, seconds: float) -> None:
        """The untimed part of a step: from the end of the last step's timed work to the start of this
        one's (the generation loop, detokenizing, the consumer of the tokens, these calls). Left out,
        it made a plain step look ~3% cheaper than it is on the demo pair (30 us of 0.9 ms) next to a
        draft step, which pays it once for ~3 tokens: near a tie the policy stayed plain (demo F16
        code on a Xeon: 89% plain steps where length 3 ran at 1.14x of target-only). A model's first
        step follows its load and first prefill, no step: not priced (taken as a draft step's, it
        made demo F32's plain steps look 14% dearer than they ran, 0.24 ms against 0.03-0.07)."""
        if self._last_k < 0:
            return
        table = self.plain_step if self._last_k == 0 else self.step  # what the step before handed on
        if self._prices(table, 1, True, self._reply_step < self.settle):
            table.observe(1, seconds)

    def record(
        self, k: int, n_accepted: int, draft_seconds: float, verify_seconds: float, fed: bool = True,
        asked: int | None = None,
    ) -> None:
        """What the step of k drafted tokens did: accepted count and its two costs.

        `asked`: the length the policy chose, when the draft's confidence cut (engine/draft_confidence.py)
        kept only k of it. The verify is priced at its real size, k + 1; the draft decode, the acceptance
        profile and the tries at the asked length, a cut position counting as a rejected one: what
        choosing that length yields is what the profile must predict (recording the drafted length
        instead shows it only the confident positions), and a step cut to nothing is not priced as a
        plain step's feeding. Measured against recording the drafted length (SmolLM2 F32, 18 prompts,
        one interleaved run on a 2-core EPYC, 2026-12-06): 1.040x against 1.045x of target-only overall,
        code 1.219x against 1.210x: the same within the run's noise; kept because it prices what ran.

        The cost tables learn from steps of the same size as the step before (once a size has a
        price): a step that changes size also rebuilds compute graphs (llama.cpp re-plans a graph
        whose batch changed; CUDA re-captures), which a run of that size pays once, not every step.
        Priced by isolated probes, drafting on an H200 looked 1.5x dearer than it runs (demo Q8_0:
        a length-7 step 1.56 ms isolated, ~1.0 ms in a run), and the policy stayed plain at 0.69-0.77x
        of fixed length 7. What switches cost is the probe cycle's measure (`cycle`)."""
        a = k if asked is None else asked
        opening, self._opening_step = self._opening_step, False
        self._reply_tokens += n_accepted + 1
        if self._cycle is not None:
            self._cycle_step(a, n_accepted, draft_seconds + verify_seconds)
        steady = k == self._last_k  # the verify's graph is k + 1 rows, the draft's a + 1
        steady_draft = a == self._last_asked
        self._last_k, self._last_asked = k, a
        cold = self._reply_step < self.settle
        # whether the load was timed busy, judged before either table's check below moves a price
        busy = bool(a) and (k + 1 in self._loaded_verify or a in self._loaded_draft) and self._load_implausible()
        self._reply_step += 1
        if a == 0 and not fed:
            if self._bare_due() and self._prices(self.bare, 1, steady, cold):
                if self._bare1_loaded:  # the first live price replaces the load's, if far from it
                    self._bare1_loaded = False
                    _drop_if_off(self.bare, 1, verify_seconds)
                self.bare.observe(1, verify_seconds)
            self._bare_seen += 1
            self._gap_open = True
            return
        if self._prices(self.verify, k + 1, steady, cold):
            if k == 0 and self._check_seen is not None:  # a check's steady step: judged once settled
                self._check_seen.append(verify_seconds)
                if settled(self._check_seen, CHECK_WINDOW):
                    self._check_left = 0
            elif k == 0 and self._verify1_loaded:  # a plain step's first live price: the load's, if near
                self._verify1_loaded = False
                _drop_if_off(self.verify, 1, verify_seconds)
            elif k:
                _check_load_price(self.verify, self._loaded_verify, k + 1, verify_seconds, busy)
            self.verify.observe(k + 1, verify_seconds)
        if k == 0 and self._check_seen is not None and self._check_left == 0:
            self._end_check()
        filled, self._gap_open = self._gap_open, False
        if a == 0:
            # The first fed step after unfed ones also fills the draft's gap (DraftSide.fill_gap: a
            # row per position left unfed) and is no price of feeding one step: priced so, a warm-up's
            # first step after 44 unfed steps made feeding look 10x dearer, the 16 warm-up feedings
            # of a probe cycle 16x that, and the probe gap jumped from ~60 to ~1,200 steps at the
            # start of the warm-up, which it then dropped; the policy stayed plain for good (demo
            # F32 prose, where fixed 4 ran at 1.24x of target-only: 100% plain, 0.80x of it). What
            # filling gaps costs is in the probe cycle's measure (`cycle`).
            if not filled and self._prices(self.feed, 1, True, cold):
                self.feed.observe(1, draft_seconds)
            return
        if self._prices(self.draft, a, steady_draft, cold):
            _check_load_price(self.draft, self._loaded_draft, a, draft_seconds, busy)
            self.draft.observe(a, draft_seconds)
        if opening:
            self.opening_profile.observe(a, n_accepted)
        else:
            self.profile.observe(a, n_accepted)
            self.memory.observe(a, n_accepted)
        self.cuts.observe(a, k)  # the first k of the a asked passed the confidence cut
        self._tried[a] = self._tried.get(a, 0) + 1
        if self._probing:
            self._probe_made += 1
            self._probe_acc += n_accepted
        if self._probing and self._probe_left == 0:  # the probe's last step: its verdict
            if self._go_on():
                return
            self._probes += 1
            self._plain_run = 0
            if self.best(self.k_max) == 0:  # the probe did not pay: wait longer, unless it came close
                self._close = self._came_close()
                self._close_fails = self._close_fails + 1 if self._close else 0
                if not self._close:
                    self._probe_gap = min(self._probe_gap * 2, self.probe_max)
                else:
                    self._probe_gap = self.probe_first
            # A probe that pays starts a run: whether drafting paid is judged when it ends (`_leave_run`).
            self._probing = False

    def _go_on(self) -> bool:
        """Whether the probe just ended should draft on. The point estimate says plain, but it
        rests on a handful of steps: a draft that fits can lose its first few by chance, and the
        policy then stayed plain for hundreds of steps (simulated on the demo-F32 costs of the
        EPYC at 80-90% acceptance a position, where length 5-7 pays 1.2-1.5x: the worst of 12
        seeds 0.87-0.91x of the best fixed length; 0.93-0.95x with this). So a probe that saw a
        drafted token accepted goes on, at the length that would pay most at acceptance
        `optimism` standard errors up, while that length could beat a plain step, for at most
        `probe_most` steps in all. A probe that saw nothing accepted stops: a draft that stopped
        fitting would otherwise be carried by its past acceptance. The plausible acceptance stops
        at `BEST_ACCEPTANCE`: a position with few trials, raised by its prior's weight alone, came
        out at ~1.0, and length 7 looked best where a length-7 step costs 7.4 plain steps (SmolLM2
        Q4_1 code: 8 such steps took the time of 59 plain steps, 2026-12-05)."""
        if self.optimism <= 0 or self._probe_made >= self.probe_most or self.best(self.k_max) != 0:
            return False
        if not self._probe_acc:  # nothing accepted: no reason to hope (nor stale history to lean on)
            return False
        p = self.profile.upper(self.optimism, BEST_ACCEPTANCE)
        k = self._best_draft(self.k_max, p)
        if (self.rate(k, p) or 0.0) <= (self.rate(0) or 0.0):
            return False
        self._probe_k = k
        self._probe_left = min(self.probe_steps, self.probe_most - self._probe_made)
        return True

    def _cycle_step(self, k: int, n_accepted: int, seconds: float) -> None:
        """Add a step to the probe cycle under way. A cycle runs from the first warm-up feeding to
        the plain step after the probe; what it took over the same tokens at a plain step's cost is
        its true price (the cost tables alone miss the graph switches around an isolated probe and
        the draft's catching up on the positions left unfed, 5-10x a plain step on a small model)."""
        cyc = self._cycle
        assert cyc is not None
        closing = self._cycle_closing
        if not (closing and k):  # a draft step right after the probe: drafting pays, no plain run
            cyc[0] += seconds
            cyc[1] += n_accepted + 1
        if k and not closing:
            self._cycle_closing = self._probing and self._probe_left == 0
            if not self._probing:  # an explore/sweep step mid-cycle: not a probe cycle after all
                self._cycle = None
            return
        if closing:
            plain = self.rate(0)
            if plain:
                self.cycle.observe(1, max(cyc[0] - cyc[1] / plain, 1e-9))
            self._cycle, self._cycle_closing = None, False


# A run of prices settles when the median of its last `SETTLE_WINDOW` is at least `SETTLE_RATIO` of
# the median of the `SETTLE_WINDOW` before them (`settled`).
SETTLE_WINDOW = 5
SETTLE_RATIO = 0.97
# A plain-price check's window: each of its steps forgoes a draft step, which may be worth several
# (GPU-like costs at 90% a position, ~9 tokens a step: windows of 5 cost 1.4% of 6,000 tokens).
CHECK_WINDOW = 3


def settled(seconds: list[float], w: int = SETTLE_WINDOW) -> bool:
    """Whether steps timed in a row have stopped getting cheaper: the median of the last w at least
    `SETTLE_RATIO` of the median of the w before them. Right after other work a step of a model that
    fits a shared cache runs slow for a while (demo F32 on the 2-core Xeon: 3.3-3.6 ms falling to a
    steady 1.65 over ~10 steps): priced by its first steps, a plain run looks up to 2x dearer than
    it runs."""
    return len(seconds) >= 2 * w and _median(seconds[-w:]) >= SETTLE_RATIO * _median(seconds[-2 * w : -w])


def _drop(table: CostTable, n: int) -> None:
    """Forget size n's price in `table`."""
    table.samples.pop(n, None)
    table.values.pop(n, None)
    table.version += 1


# How much cheaper than the load's a live price of size 1 must be for the load's samples to go.
LOAD_PRICE_OFF = 0.25


def _drop_if_off(table: CostTable, n: int, seconds: float) -> bool:
    """Forget the load's price of size n when a live one is more than `LOAD_PRICE_OFF` below it (the
    load was timed on a busy machine): the live step alone then prices it. Otherwise the live step
    joins the load's samples. Only cheaper: a plain step's first live price comes right after
    draft steps, on cold caches (the first two plain steps after a drafting run took 2.1-2.8 ms on
    demo F32 where target-only ran 1.67), and such a step replacing a price that was right would
    make plain look up to 30% dearer than it runs, the direction in which a losing draft drafts on.
    True when it forgot it."""
    price = table.values.get(n)
    if price and seconds < price * (1.0 - LOAD_PRICE_OFF):
        _drop(table, n)
        return True
    return False


def _check_load_price(table: CostTable, loaded: set[int], n: int, seconds: float, busy: bool) -> None:
    """A draft step's first live price of size n while the load's alone prices it (`loaded`): more
    than `LOAD_PRICE_OFF` below the cheapest of the load's samples, n's samples give way to the live
    one (only cheaper, as for a plain step: `_drop_if_off`). Where the load's prices show it was
    timed on a busy machine (`busy`: `DraftPolicy._load_implausible`), which slows every size it
    timed, every size still priced by the load alone is also scaled by the same ratio (live over
    the load's price of n). Without it a load that priced drafting 3x dear (demo F32's costs,
    simulated; plain priced right) never drafted again, 0.64-0.89x of a load priced right: a probe's
    one steady step joined a median with the load's two samples, and probes of a size the prices
    call hopeless come rarely. Scaled on any load (one live step against one noisy load price), demo
    F32 prose drafted at a loss in a slow spell: 0.90x of the policy without it in one paired run."""
    if n not in loaded:
        return
    loaded.discard(n)
    xs = table.samples.get(n)
    if xs and seconds < min(xs) * (1.0 - LOAD_PRICE_OFF):
        if busy:
            table.scale(set(loaded), seconds / _median(xs))
        _drop(table, n)


class FixedPolicy:
    """Always the same length (the pinned setting, and what benchmarks compare against)."""

    def __init__(self, k: int) -> None:
        self.k_max = k

    def choose(self, limit: int) -> int:
        return max(0, min(limit, self.k_max))

    def coast(self, limit: int) -> int:
        return 0

    def uncoast(self, n: int) -> None:
        pass

    def begin_reply(self) -> None:
        pass

    def needs_features(self) -> bool:
        return True

    def overhead(self, seconds: float) -> None:
        pass

    def record(self, k: int, n_accepted: int, draft_seconds: float, verify_seconds: float, fed: bool = True,
               asked: int | None = None) -> None:
        pass
