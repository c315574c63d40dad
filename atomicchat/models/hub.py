"""Hugging Face Hub settings read at call time, error translation, and cache-layout helpers.

huggingface_hub reads HF_ENDPOINT / HF_HOME / HF_HUB_OFFLINE once, when it is first imported. The
app (and the tests) may set them later, so every call here re-reads the environment and passes
`endpoint=` / `cache_dir=` explicitly. The cache is the standard one (`$HF_HOME/hub`), so files are
shared with `hf download`, transformers, LM Studio-style tools that read it, and so on:

    models--{org}--{name}/blobs/{etag}                  the bytes (etag = sha256 for LFS files)
    models--{org}--{name}/snapshots/{commit}/{file}     relative symlink to the blob
    models--{org}--{name}/refs/{revision}               commit hash of a branch or tag
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from atomicchat.models.errors import (
    AuthError,
    GatedError,
    HubError,
    ModelsError,
    NotFoundError,
    OfflineError,
)

DEFAULT_ENDPOINT = "https://huggingface.co"
_TRUE = {"1", "ON", "YES", "TRUE"}
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")


def endpoint() -> str:
    """The Hub base URL: $HF_ENDPOINT now, else what huggingface_hub was started with."""
    value = os.environ.get("HF_ENDPOINT")
    if value:
        return value.rstrip("/")
    try:
        from huggingface_hub import constants

        return str(constants.ENDPOINT).rstrip("/")
    except ImportError:  # pragma: no cover - huggingface_hub is a hard dependency
        return DEFAULT_ENDPOINT


def cache_dir() -> Path:
    """The standard HF hub cache folder, honouring HF_HUB_CACHE and HF_HOME as set right now."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        value = os.environ.get(var)
        if value:
            return Path(os.path.expandvars(value)).expanduser()
    home = os.environ.get("HF_HOME")
    if home:
        return Path(os.path.expandvars(home)).expanduser() / "hub"
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def is_offline() -> bool:
    """True when HF_HUB_OFFLINE is set now or was set when huggingface_hub was imported."""
    if (os.environ.get("HF_HUB_OFFLINE") or "").upper() in _TRUE:
        return True
    import sys

    constants = sys.modules.get("huggingface_hub.constants")
    return bool(getattr(constants, "HF_HUB_OFFLINE", False))


def set_offline(offline: bool) -> None:
    """Switch offline mode for this process: our code and every huggingface_hub call honour it."""
    os.environ["HF_HUB_OFFLINE"] = "1" if offline else "0"
    from huggingface_hub import constants

    constants.HF_HUB_OFFLINE = offline


def repo_folder(repo_id: str, cache: Path | None = None) -> Path:
    """`models--org--name` inside the cache (the layout huggingface_hub uses for model repos)."""
    return (cache or cache_dir()) / ("models--" + repo_id.replace("/", "--"))


def repo_url(repo_id: str) -> str:
    return f"{endpoint()}/{repo_id}"


def same_host(url_a: str, url_b: str) -> bool:
    return urlsplit(url_a).netloc.lower() == urlsplit(url_b).netloc.lower()


@functools.lru_cache(maxsize=1)
def network_errors() -> tuple[type[BaseException], ...]:
    """Transport-level exception classes of whichever HTTP stack huggingface_hub uses."""
    found: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for module, name in (("httpx2", "TransportError"), ("httpx", "TransportError"), ("requests", "ConnectionError")):
        try:
            mod = __import__(module)
            found.append(getattr(mod, name))
        except (ImportError, AttributeError):
            continue
    return tuple(found)


def translate_error(exc: BaseException, what: str, repo_id: str) -> ModelsError:
    """Map a huggingface_hub / HTTP exception to a typed error whose message says what to do."""
    if isinstance(exc, ModelsError):
        return exc
    from huggingface_hub import errors as hf

    if isinstance(exc, hf.OfflineModeIsEnabled) or (isinstance(exc, hf.LocalEntryNotFoundError) and is_offline()):
        return OfflineError(f"{what} is not downloaded yet and Atomic Chat is in offline mode (HF_HUB_OFFLINE is set).")
    if isinstance(exc, hf.GatedRepoError):
        return GatedError(
            f"{repo_id} is a gated repository. Open {repo_url(repo_id)} while signed in, accept its terms, then set "
            "HF_TOKEN to a read token (or run `hf auth login`) and pull again."
        )
    if isinstance(exc, hf.RevisionNotFoundError):
        return NotFoundError(f"The revision requested for {repo_id} does not exist on the Hub; refresh the catalog.")
    if isinstance(exc, hf.EntryNotFoundError):
        return NotFoundError(f"{what} was not found in {repo_id} on the Hub; the catalog may be outdated (try a refresh).")
    if isinstance(exc, hf.RepositoryNotFoundError):
        return NotFoundError(
            f"The repository {repo_id} was not found on the Hub. If it is private, set HF_TOKEN to a token that can read it."
        )
    if isinstance(exc, hf.HfHubHTTPError):
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status == 401:
            return AuthError(f"The Hub rejected the access token while fetching {what}; check HF_TOKEN or sign in again.")
        if status == 403:
            return AuthError(f"The Hub refused access to {what} in {repo_id} (403); your token lacks permission for it.")
        if status == 429:
            return HubError(f"The Hub is rate-limiting downloads of {what}; wait a minute and pull again.")
        return HubError(f"The Hub answered with an error while fetching {what} (HTTP {status}); try again later.")
    if isinstance(exc, OSError) and "Consistency check failed" in str(exc):
        return HubError(f"The download of {what} ended early (the connection was cut); pull again to resume it.")
    if isinstance(exc, (hf.LocalEntryNotFoundError, *network_errors())):
        host = urlsplit(endpoint()).netloc
        return OfflineError(f"Cannot reach the Hugging Face Hub ({host}) to fetch {what}; check your internet connection.")
    return HubError(f"Fetching {what} from {repo_id} failed: {exc}")


def is_sha256(value: str | None) -> bool:
    return bool(value) and bool(SHA256_RE.match(str(value)))
