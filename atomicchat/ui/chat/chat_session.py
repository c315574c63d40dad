"""The open chat's behaviour: send, stream, stop, regenerate, continue, edit-and-resend, and saving.

It sits between the store, the engine host and the chat view, and is the only place that writes
conversations while the app runs. A reply is saved as it streams (every SAVE_INTERVAL_S and at the
end), so a crash keeps what was on screen. Only one reply is written at a time: switching chats
stops it (it is kept, marked "stopped").
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from PySide6.QtCore import QObject, QTimer, Signal

from atomicchat.stats import TargetSpeed, continued_counts
from atomicchat.store import Store, baseline_key
from atomicchat.store.conversations import DEFAULT_TITLE
from atomicchat.store.records import DONE, ERROR, INTERRUPTED, STOPPED, STREAMING, Message, ReplyStats
from atomicchat.store.settings import AppSettings
from atomicchat.ui.chat.chat_view import ChatView
from atomicchat.ui.chat.message_widget import MessageWidget
from atomicchat.ui.engine.host import BASELINE_TOKENS, EngineHost
from atomicchat.ui.engine.worker_types import BaselineResult, GenRequest, GenResult, ModelReady, StreamChunk, WorkerFailure

SAVE_INTERVAL_S = 0.5
AUTO_BASELINE_DELAY_MS = 1500  # after the model loads, while the user reads or types
AUTO_BASELINE_TOKENS = BASELINE_TOKENS  # runs once per model, in the background; shorter would flatter it


@dataclass
class _Active:
    req_id: int
    conversation_id: int
    message_id: int
    widget: MessageWidget | None
    base: ReplyStats  # model facts that do not change while streaming
    text: list[str] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)
    spans: list[list[int]] = field(default_factory=list)
    stats: ReplyStats | None = None
    last_save: float = 0.0
    offset: int = 0  # characters of the reply before this part (Continue), where the worker's offsets start
    before: ReplyStats | None = None  # the counters of that earlier part, added to this part's

    def snapshot(self, engine_stats: ReplyStats | None = None) -> ReplyStats:
        s = engine_stats or self.stats or ReplyStats()
        if self.before is not None:
            s = replace(s, **continued_counts(self.before, s))
        return replace(
            s,
            used_draft=self.base.used_draft,
            target_name=self.base.target_name,
            draft_name=self.base.draft_name,
            device=self.base.device,
            model_key=self.base.model_key,
            step_accepted=self.steps,
            draft_spans=self.spans,
            finish_reason=s.finish_reason,
        )


class ChatSession(QObject):
    busy_changed = Signal(bool)
    notice = Signal(str, str)  # kind ("info" | "warning" | "error"), text
    conversations_changed = Signal()
    current_changed = Signal(object)  # conversation id or None
    measuring_changed = Signal(bool)
    draft_off_requested = Signal(object)  # target Path: DFlash was slower here, the user turned it off

    def __init__(self, store: Store, host: EngineHost, view: ChatView, settings: Callable[[], AppSettings]) -> None:
        super().__init__()
        self.store = store
        self.host = host
        self.view = view
        self._settings = settings
        self.model: ModelReady | None = None
        self.model_key = ""
        self.conversation_id: int | None = None
        self._active: _Active | None = None
        self._baseline_req: int | None = None
        self._baseline_auto = False
        self._baseline_yielded: int | None = None  # an automatic baseline stopped for a reply
        self._baseline_wanted = False
        self.recommended = None  # atomicchat.models.sampling_defaults.Sampling of the loaded model
        self._baseline_timer = QTimer(self)  # one owner, stopped at shutdown (the store closes after)
        self._baseline_timer.setSingleShot(True)
        self._baseline_timer.setInterval(AUTO_BASELINE_DELAY_MS)
        self._baseline_timer.timeout.connect(self._auto_baseline)
        view.configure(self.baseline_for, settings().colour_draft_tokens)
        view.edit_submitted.connect(self.edit_and_resend)
        view.regenerate_requested.connect(self.regenerate)
        view.continue_requested.connect(self.continue_reply)
        view.measure_requested.connect(self.measure_baseline)
        view.dflash_off_requested.connect(self._turn_draft_off)
        view.version_requested.connect(self.show_version)
        host.chunk.connect(self._on_chunk)
        host.finished.connect(self._on_finished)
        host.failed.connect(self._on_failed)
        host.baseline.connect(self._on_baseline)

    # model -------------------------------------------------------------------------------
    def set_model(self, ready: ModelReady | None) -> None:
        self.model = ready
        self.recommended = None
        if ready is None:
            self.model_key = ""
            return
        from atomicchat.models.sampling_defaults import recommended

        self.recommended = recommended(ready.request.target_path)
        path = str(ready.request.target_path)
        try:
            size = os.path.getsize(path)
        except OSError:
            size = 0
        self.model_key = baseline_key(
            path, size, str(ready.info.device), ready.request.n_gpu_layers, ready.info.draft_name or ""
        )
        self.view.refresh_baselines()
        if ready.info.draft_name and self.baseline_for(self.model_key) is None:
            self._baseline_wanted = True  # measured once, when idle: the speedup figure needs it
            self._baseline_timer.start()

    def baseline_for(self, key: str) -> TargetSpeed | None:
        """The measured target-only speed for this model, or None (also for a baseline measured by an
        older version at one context length only, which is then measured again)."""
        if not key:
            return None
        b = self.store.baselines.get(key)
        return b.speed if b is not None and b.depth is not None else None

    @property
    def busy(self) -> bool:
        return self._active is not None

    # conversations -----------------------------------------------------------------------
    def open(self, conversation_id: int | None) -> None:
        if conversation_id == self.conversation_id and conversation_id is not None:
            return
        self._detach_active()
        self.conversation_id = conversation_id
        if conversation_id is None or self.store.chats.get(conversation_id) is None:
            self.conversation_id = None
            self.view.clear_messages()
        else:
            self.view.show_messages(self.store.chats.messages(conversation_id))
            self.refresh_versions()
        self.current_changed.emit(self.conversation_id)

    def new_chat(self) -> None:
        """An empty chat; it is written to the store with its first message, so no empty chats pile up."""
        self._detach_active()
        self.conversation_id = None
        self.view.clear_messages()
        self.current_changed.emit(None)

    def _detach_active(self) -> None:
        if self._active is not None:
            self.host.cancel(self._active.req_id)
            self._active.widget = None

    # sending -----------------------------------------------------------------------------
    def send(self, text: str) -> bool:
        text = text.strip()
        if not text:
            return False
        if self.busy:
            self.notice.emit("warning", "A reply is still being written. Stop it first (Esc).")
            return False
        if self.model is None:
            self.notice.emit(
                "error", "No model is loaded yet. Open the model manager (Ctrl+M) to pick or download one."
            )
            return False
        if self.conversation_id is None:
            conv = self.store.chats.create(self._new_title(text))
            self.conversation_id = conv.id
            self.conversations_changed.emit()
            self.current_changed.emit(conv.id)
        else:
            existing = self.store.chats.get(self.conversation_id)
            if existing is not None and existing.title == DEFAULT_TITLE:
                self.store.chats.rename(existing.id, self._new_title(text))
        msg = self.store.chats.add_message(self.conversation_id, "user", text)
        self.view.append(msg)
        self._start_reply()
        self.conversations_changed.emit()
        return True

    def regenerate(self) -> None:
        """Write the last reply again (it is replaced)."""
        if self.busy or self.conversation_id is None or self.model is None:
            return
        msgs = self.store.chats.messages(self.conversation_id)
        if not msgs:
            return
        last = msgs[-1]
        if last.role == "assistant":
            self.store.chats.set_aside_from(self.conversation_id, last.position)  # kept as version 1 of n
            self.view.remove_from(last.position)
        self._start_reply(regenerate=True)  # after a user message left without a reply, this answers it

    def _continuable(self) -> Message | None:
        msgs = self.store.chats.messages(self.conversation_id) if self.conversation_id is not None else []
        return msgs[-1] if msgs and msgs[-1].can_continue() else None

    def can_continue(self) -> bool:
        return not self.busy and self._continuable() is not None

    def continue_reply(self) -> None:
        """Write more of the last reply (cut at the length limit, stopped, or interrupted by a crash):
        the model goes on from its own text, in the same message."""
        if self.busy or self.model is None:
            return
        last = self._continuable()
        if last is not None:
            self._start_reply(resume=last)

    def edit_and_resend(self, position: int, text: str) -> None:
        """Replace the user message at `position`, drop everything after it, and reply again."""
        if self.conversation_id is None:
            return
        if self.busy:
            self.notice.emit("warning", "Stop the reply being written before editing a message.")
            return
        if self.model is None:
            self.notice.emit("error", "No model is loaded yet, so the edited message cannot be answered.")
            return
        msgs = self.store.chats.messages(self.conversation_id)
        target = next((m for m in msgs if m.position == position and m.role == "user"), None)
        if target is None:
            return
        self.store.chats.set_aside_from(self.conversation_id, position)  # the old question and its answers stay
        msg = self.store.chats.add_message(self.conversation_id, "user", text)
        self.view.remove_from(position)
        self.view.append(msg)
        self._start_reply()

    def show_version(self, position: int, index: int) -> None:
        """Page to another version of the message at `position` (and the turns that followed it)."""
        if self.conversation_id is None:
            return
        if self.busy:
            self.notice.emit("warning", "Wait for the reply to finish (or stop it), then switch versions.")
            return
        if self.store.chats.show_version(self.conversation_id, position, index):
            self.view.show_messages(self.store.chats.messages(self.conversation_id))
            self.refresh_versions()

    def redraw(self) -> None:
        """Render the open chat again (a theme change: code colours are baked into rendered replies)."""
        if self.conversation_id is not None and not self.busy:
            self.view.show_messages(self.store.chats.messages(self.conversation_id))
            self.refresh_versions()

    def refresh_versions(self) -> None:
        if self.conversation_id is not None:
            self.view.set_versions(self.store.chats.version_counts(self.conversation_id), enabled=not self.busy)

    def stop(self) -> None:
        if self._active is not None:
            self.host.cancel(self._active.req_id)

    def _history(self) -> list[dict[str, str]]:
        cfg = self._settings()
        out: list[dict[str, str]] = []
        if cfg.system_prompt.strip():
            out.append({"role": "system", "content": cfg.system_prompt.strip()})
        assert self.conversation_id is not None
        for m in self.store.chats.messages(self.conversation_id):
            if m.content.strip() and m.status != ERROR:  # a reply cut by an error is not context
                out.append({"role": m.role, "content": m.content})
        return out

    def sampling(self, regenerate: bool = False) -> dict[str, float | int | None]:
        """Temperature, top-k/p, min-p and seed for the next reply: the model's recommended values
        (GGUF, then catalog) unless the user turned that off; Regenerate always samples a new seed and,
        when the choice is greedy, samples anyway so that the new version can differ."""
        import random

        cfg = self._settings()
        out: dict[str, float | int | None] = {
            "temperature": cfg.temperature, "top_k": cfg.top_k, "top_p": cfg.top_p, "min_p": cfg.min_p, "seed": None,
        }
        rec = self.recommended if cfg.sampling_from_model else None
        if rec is not None:
            out.update({k: v for k, v in (("temperature", rec.temperature), ("top_k", rec.top_k),
                                          ("top_p", rec.top_p), ("min_p", rec.min_p)) if v is not None})
        if regenerate:
            out["seed"] = random.getrandbits(32)
            if float(out["temperature"] or 0) <= 0:
                from atomicchat.models.sampling_defaults import FALLBACK_TEMPERATURE

                out["temperature"] = FALLBACK_TEMPERATURE
                self.notice.emit("info", f"Regenerate samples at temperature {FALLBACK_TEMPERATURE} so the new "
                                         "version can differ; your setting (0, always the same reply) is kept for "
                                         "new messages.")
        return out

    def _start_reply(self, regenerate: bool = False, resume: Message | None = None) -> None:
        """A new reply to the last user turn, or with `resume` (the last message, a reply) more of it."""
        assert self.conversation_id is not None and self.model is not None
        self._yield_baseline()
        cfg = self._settings()
        samp = self.sampling(regenerate)
        info = self.model.info
        has_draft = self.model.request.draft_path is not None and info.draft_name is not None
        use_draft = bool(cfg.use_draft and has_draft)
        history = self._history()
        base = ReplyStats(
            used_draft=use_draft,
            target_name=str(info.target_name),
            draft_name=str(info.draft_name or "") if use_draft else "",
            device=str(info.device),
            model_key=self.model_key,
        )
        draft_max = cfg.draft_max or int(getattr(info, "draft_max", 0) or 0) or None
        req_id = self.host.next_request_id()
        if resume is None:
            msg = self.store.chats.add_message(self.conversation_id, "assistant", "", status=STREAMING, stats=base)
            widget = self.view.append(msg)
            widget.begin_stream(base, draft_max)
            self._active = _Active(req_id, self.conversation_id, msg.id, widget, base, last_save=time.monotonic())
        else:
            if history and history[-1]["role"] == "assistant":
                history.pop()  # the reply goes to the worker as the text to go on from
            before = resume.stats if resume.stats is not None and resume.stats.model_key == self.model_key else None
            self.store.chats.update_message(resume.id, resume.content, status=STREAMING, stats=before or base)
            widget = self.view.widgets()[-1]
            widget.begin_stream(base, draft_max, keep_text=True)
            self._active = _Active(req_id, self.conversation_id, resume.id, widget, base, text=[resume.content],
                                   steps=list(before.step_accepted) if before else [],
                                   spans=[list(s) for s in before.draft_spans] if before else [],
                                   last_save=time.monotonic(), offset=len(resume.content), before=before)
        params = cfg.gen_params(use_draft=use_draft, **samp)  # type: ignore[arg-type]
        self.host.generate(GenRequest(req_id, history, cfg.enable_thinking, params,
                                      continue_text=resume.content if resume is not None else ""))
        self.busy_changed.emit(True)
        self.refresh_versions()  # paging is off while the reply streams

    # streaming results -------------------------------------------------------------------
    def _on_chunk(self, chunk: StreamChunk) -> None:
        a = self._active
        if a is None or chunk.req_id != a.req_id:
            return
        a.text.append(chunk.text)
        a.steps.extend(chunk.step_accepted)
        for s, e in chunk.draft_spans:
            s, e = s + a.offset, e + a.offset
            if a.spans and a.spans[-1][1] == s:
                a.spans[-1][1] = e
            else:
                a.spans.append([s, e])
        a.stats = chunk.stats
        snap = a.snapshot()
        if a.widget is not None:
            a.widget.append_chunk(chunk, snap)
        now = time.monotonic()
        if now - a.last_save >= SAVE_INTERVAL_S:
            a.last_save = now
            self.store.chats.update_message(a.message_id, "".join(a.text), stats=snap)

    def _on_finished(self, result: GenResult) -> None:
        a = self._active
        if a is None or result.req_id != a.req_id:
            return
        stats = replace(a.snapshot(result.stats), finish_reason=result.reason)
        status = STOPPED if result.reason == "cancelled" else DONE
        self._end(a, status, stats)
        if self._baseline_wanted:  # it waited for this reply
            self._baseline_timer.start()
        if result.dropped_messages:
            n = result.dropped_messages
            self.notice.emit(
                "info",
                f"The {n} oldest message{'s' if n != 1 else ''} of this chat did not fit the context window and "
                "were left out of the model's view (they are still saved here).",
            )
        if result.reason == "repetition":
            self.notice.emit(
                "info",
                "The reply was stopped because the model kept writing the same text over and over. Regenerate to "
                "try again, or ask in other words (Settings > Chat can turn this off).",
            )
        if result.reason == "context":
            self.notice.emit(
                "warning",
                "The reply stopped because the context window is full. Start a new chat or raise the context size in Settings.",
            )

    def _yield_baseline(self) -> None:
        """A reply sent while the automatic baseline runs goes first: the baseline (a few seconds on a
        slow machine) is stopped and measured again once the reply is done. One the user asked for
        is left to finish."""
        if self._baseline_req is None or not self._baseline_auto:
            return
        self.host.cancel(self._baseline_req)
        self._baseline_yielded, self._baseline_req = self._baseline_req, None
        self._baseline_wanted = True
        self.measuring_changed.emit(False)

    def _on_failed(self, failure: WorkerFailure) -> None:
        if failure.kind == "baseline" and failure.req_id == self._baseline_yielded:
            self._baseline_yielded = None  # stopped for a reply, on purpose: nothing to report
            return
        if failure.kind in ("baseline", "crash") and failure.req_id == self._baseline_req:
            self._baseline_req = None
            self.measuring_changed.emit(False)
            self.notice.emit("error", f"Measuring the baseline failed: {failure.message}")
            return
        a = self._active
        if failure.kind not in ("generate", "crash") or a is None or failure.req_id != a.req_id:
            return
        stats = replace(a.snapshot(), finish_reason="error", error=failure.message)
        self._end(a, INTERRUPTED if failure.kind == "crash" else ERROR, stats)  # the text so far is kept
        if failure.kind != "crash":  # the window shows a crash with its Reload button
            self.notice.emit("error", failure.message)

    def _end(self, a: _Active, status: str, stats: ReplyStats) -> None:
        text = "".join(a.text)
        if status == DONE and a.widget is None:
            status = STOPPED  # the user switched away and it was cancelled
        self.store.chats.update_message(a.message_id, text, status=status, stats=stats)
        self.store.chats.touch(a.conversation_id)
        if a.widget is not None:
            a.widget.finish(status, stats, stats.error)
            self.view.refresh_last()
        self._active = None
        self.busy_changed.emit(False)
        if a.conversation_id == self.conversation_id:
            self.refresh_versions()

    # baseline ----------------------------------------------------------------------------
    def _new_title(self, text: str) -> str:
        """First words + time, unique among the chats ("Write a function that… · 14:05")."""
        from datetime import datetime

        from atomicchat.attachments import split
        from atomicchat.chat_titles import chat_title

        typed, files = split(text)  # a message of files alone is named after the first
        first = typed if typed.strip() or not files else files[0].name
        return chat_title(first, datetime.now(), {c.title for c in self.store.chats.conversations()})

    def _auto_baseline(self) -> None:
        if not self._baseline_wanted or self.model is None or self._baseline_req is not None:
            return
        if self.busy:
            return  # tried again when the reply finishes
        if self.baseline_for(self.model_key) is not None:
            self._baseline_wanted = False
            return
        self._baseline_wanted = False
        self.measure_baseline(auto=True)

    def _turn_draft_off(self) -> None:
        if self.model is not None:
            self.draft_off_requested.emit(self.model.request.target_path)

    def measure_baseline(self, auto: bool = False) -> None:
        if self.model is None:
            self.notice.emit("error", "Load a model first; the baseline is measured on the loaded model.")
            return
        if self.busy:
            self.notice.emit("warning", "Wait for the reply to finish, then measure the baseline.")
            return
        if self._baseline_req is not None:
            return
        self._baseline_req = self.host.measure_baseline(AUTO_BASELINE_TOKENS if auto else BASELINE_TOKENS)
        self._baseline_auto = auto
        self.measuring_changed.emit(True)
        if not auto:
            self.notice.emit(
                "info", "Measuring the target-only speed of this model (three short generations without the draft)…"
            )

    def _on_baseline(self, result: BaselineResult) -> None:
        if result.req_id == self._baseline_yielded:  # it finished before the stop reached it: kept
            self._baseline_yielded, self._baseline_wanted = None, False
        elif result.req_id != self._baseline_req:
            return
        self._baseline_req = None
        self.store.baselines.put(self.model_key, result.speed or result.tokens_per_second, result.device)
        self.measuring_changed.emit(False)
        self.view.refresh_baselines()
        if not self._baseline_auto:
            sp = result.speed
            deep = (f", {sp.tokens_per_second_at(sp.far_depth):.1f} tok/s {sp.far_depth:.0f} tokens into a chat"
                    if sp is not None and sp.far_depth else "")
            self.notice.emit(
                "info",
                f"Target-only baseline: {result.tokens_per_second:.1f} tok/s after a short prompt{deep}, on "
                f"{result.device}. Speedups now use it.",
            )

    def save_interrupted(self) -> None:
        """At exit: a reply still open (the engine did not answer in time) is saved as stopped."""
        self._baseline_wanted = False
        self._baseline_timer.stop()
        a = self._active
        if a is not None:
            stats = replace(a.snapshot(), finish_reason="cancelled")
            self._end(a, STOPPED, stats)

    def set_colour_drafts(self, on: bool) -> None:
        self.view.set_colour_drafts(on)

    def messages(self) -> list[Message]:
        return self.store.chats.messages(self.conversation_id) if self.conversation_id else []
