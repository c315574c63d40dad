"""The model manager's one door to `atomicchat.models` and `atomicchat.demo` (no Qt here).

Keeping the window on this thin adapter means the widgets never import the Hub client, the
registry lock or llama.cpp directly, and tests can hand the window a fake service. Calls marked
blocking do disk or network work: the UI runs them in a thread (see model_manager).
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from atomicchat.store.settings import AppSettings


@dataclass(frozen=True)
class ModelChoice:
    """Which files to load now, and why these."""

    target: Path
    draft: Path | None
    source: str  # "chosen" | "installed" | "demo"
    note: str = ""  # shown to the user, e.g. "Using the bundled demo pair …"


def _exists(path: str | Path | None) -> bool:
    return bool(path) and Path(path).is_file()  # type: ignore[arg-type]


class ModelService:
    def __init__(self, registry_path: Path | None = None) -> None:
        self._registry_path = registry_path
        self._registry: Any = None

    # availability ------------------------------------------------------------------------
    def unavailable_reason(self) -> str | None:
        """None when the model manager can work; else why not, in words."""
        try:
            importlib.import_module("atomicchat.models.catalog")
            importlib.import_module("atomicchat.models.registry")
        except Exception as exc:  # noqa: BLE001 - a missing optional piece must not stop the app
            return f"The model manager is not available in this build ({exc})."
        return None

    @property
    def registry(self) -> Any:
        if self._registry is None:
            from atomicchat.models.registry import Registry

            self._registry = Registry(self._registry_path)
        return self._registry

    # catalog and fit ---------------------------------------------------------------------
    def catalog(self) -> Any:
        """Catalog of pairs (raises CatalogError with the reason)."""
        from atomicchat.models.catalog import load_catalog

        return load_catalog()

    def hardware(self) -> Any:
        """Blocking: probes RAM, disk and the GPUs llama.cpp can use (cached after the first call)."""
        from atomicchat.models.hardware import probe

        return probe()

    def fit(self, pair: Any, quant: str, draft_quant: str, n_ctx: int, use_draft: bool, hardware: Any) -> Any:
        from atomicchat.models.fit import estimate

        return estimate(pair, quant, n_ctx, draft_quant=draft_quant, use_draft=use_draft, hardware=hardware)

    # installed ---------------------------------------------------------------------------
    def installed(self) -> list[Any]:
        """Every registered file (targets and drafts), newest first."""
        return sorted(self.registry.files(), key=lambda f: f.added_at, reverse=True)

    def installed_pairs(self) -> list[Any]:
        return self.registry.pairs()

    def mark_used(self, path: Path) -> None:
        """Remember when a model was last loaded (shown in the manager); never fails the load."""
        try:
            self.registry.mark_used(path)
        except Exception:  # noqa: BLE001 - a registry that cannot be written costs only the timestamp
            pass

    def is_intact(self, f: Any) -> bool:
        from atomicchat.models.registry import Registry

        return bool(Registry.is_intact(f))

    def installed_paths(self, pair: Any, quant: str, draft_quant: str) -> tuple[Path, Path] | None:
        """Paths of this pair at these quants when both files are installed and intact."""
        target_ref, draft_ref = pair.files(quant, draft_quant)
        t, d = self.registry.get(target_ref.key), self.registry.get(draft_ref.key)
        if t and d and self.is_intact(t) and self.is_intact(d):
            return Path(t.path), Path(d.path)
        return None

    def pair_problem(self, target: Path, draft: Path) -> str | None:
        """Why this draft cannot serve this target, in words; None when it can."""
        from atomicchat.models.registry import check_files

        return check_files(target, draft)

    def import_gguf(self, path: Path) -> Any:
        """Blocking: validate and register a local GGUF; returns ImportResult (paired / not paired, why)."""
        return self.registry.import_gguf(path)

    def remove(self, key: str) -> Any:
        return self.registry.remove(key)

    # downloads ---------------------------------------------------------------------------
    def new_download(self, pair: Any, quant: str, draft_quant: str) -> Any:
        from atomicchat.models.downloads import DownloadJob

        return DownloadJob(pair, quant, draft_quant, registry=self.registry)

    def run_download(self, job: Any, progress: Any, cancel: threading.Event) -> Any:
        """Blocking: fetch (resuming partial files), verify, register and pair. Raises ModelsError."""
        return job.run(progress_cb=progress, cancel_event=cancel)

    def pending_bytes(self, job: Any) -> int:
        from atomicchat.models.downloads import pending_bytes

        return int(pending_bytes(job))

    # demo and the automatic choice -------------------------------------------------------
    def demo_pair(self) -> tuple[Path, Path | None] | None:
        """The small bundled pair, when this build ships one."""
        try:
            demo = importlib.import_module("atomicchat.demo")
            target = Path(demo.demo_target_path())
            draft_fn = getattr(demo, "demo_draft_path", None)
            draft = Path(draft_fn()) if draft_fn else None
        except Exception:  # noqa: BLE001 - no demo module, or no files in resources/demo
            return None
        if not target.is_file():
            return None
        return target, draft if draft is not None and draft.is_file() else None

    def choose(self, settings: AppSettings) -> ModelChoice | None:
        """The model to load at start-up: the user's pick, else an installed pair, else the demo.

        The draft is returned even when DFlash is off; the window leaves it out at load time.
        """
        if _exists(settings.target_path):
            draft = Path(settings.draft_path) if _exists(settings.draft_path) else None
            note = ""
            if settings.use_draft and settings.draft_path and draft is None:
                note = f"The chosen draft {Path(settings.draft_path).name} is missing; running the target alone."
            return ModelChoice(Path(settings.target_path), draft, "chosen", note)
        missing = ""
        if settings.target_path:
            missing = f"The chosen model {Path(settings.target_path).name} is no longer on disk. "
        if self.unavailable_reason() is None:
            try:
                pairs = self.installed_pairs()
                if pairs:
                    p = max(pairs, key=lambda x: x.target.added_at)
                    return ModelChoice(Path(p.target.path), Path(p.draft.path), "installed", missing.strip())
                targets = [f for f in self.installed() if f.role == "target" and self.is_intact(f)]
                if targets:
                    return ModelChoice(Path(targets[0].path), None, "installed", missing.strip())
            except Exception:  # noqa: BLE001 - a damaged registry falls through to the demo
                pass
        demo = self.demo_pair()
        if demo is not None:
            note = missing + (
                f"Using the bundled demo model ({demo[0].name}). It is tiny and only for trying the app; "
                "download a real model in the model manager (Ctrl+M)."
            )
            return ModelChoice(demo[0], demo[1], "demo", note)
        return None
