"""Pull a pair from a real local HTTP server: cache layout, resume, verification and errors."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from atomicchat.models import downloads
from atomicchat.models.downloads import DownloadJob, Progress
from atomicchat.models.errors import (
    AuthError,
    CatalogOutdatedError,
    ChecksumMismatchError,
    DownloadCancelled,
    GatedError,
    HubError,
    NotEnoughDiskError,
    NotFoundError,
    OfflineError,
)
from atomicchat.models.registry import Registry
from tests.models.conftest import DRAFT_FILE, DRAFT_REPO, TARGET_FILE, TARGET_REPO, Served

REPO_ROOT = Path(__file__).resolve().parents[2]


def cache_folder(repo: str) -> Path:
    return Path(os.environ["HF_HOME"]) / "hub" / ("models--" + repo.replace("/", "--"))


def partial_of(served: Served, repo: str, filename: str) -> Path:
    sha = served.hub.file(repo, filename).sha256
    return cache_folder(repo) / "blobs" / f"{sha}.incomplete"


def test_pull_pair_lands_in_hf_cache_verified_and_paired(served: Served) -> None:
    events: list[Progress] = []
    result = DownloadJob(served.pair()).run(progress_cb=events.append)

    # standard HF layout: blob named by sha256, snapshot symlink, ref for main
    repo = served.hub.repos[TARGET_REPO]
    folder = cache_folder(TARGET_REPO)
    sha = hashlib.sha256(served.target).hexdigest()
    link = folder / "snapshots" / repo.commit / TARGET_FILE
    assert link.is_symlink() and os.path.realpath(link) == str(folder / "blobs" / sha)
    assert (folder / "refs" / "main").read_text() == repo.commit
    assert result.target_path == link and result.target_path.read_bytes() == served.target
    assert result.draft_path is not None and result.draft_path.read_bytes() == served.draft
    assert result.paired and result.pair_problem is None

    reg = Registry()
    (pair,) = reg.pairs()
    assert pair.pair_id == "tiny-dflash" and pair.target.verified and pair.target.sha256 == sha
    # progress: monotonic, whole-job totals, ends with done
    dones = [e.done for e in events]
    assert dones == sorted(dones) and events[-1].phase == "done"
    assert events[-1].done == events[-1].total == len(served.target) + len(served.draft)
    assert any(e.phase == "downloading" and e.speed > 0 for e in events)


def test_files_are_shared_with_plain_huggingface_hub(served: Served) -> None:
    from huggingface_hub import hf_hub_download

    DownloadJob(served.pair()).run()
    before = len(served.hub.log)
    path = hf_hub_download(TARGET_REPO, TARGET_FILE, local_files_only=True)
    assert Path(path).read_bytes() == served.target
    assert len(served.hub.log) == before  # found in the cache, nothing fetched


def test_second_pull_is_local_only(served: Served) -> None:
    DownloadJob(served.pair()).run()
    before = len(served.hub.log)
    result = DownloadJob(served.pair()).run()
    assert all(f.already_present for f in result.files)
    assert len(served.hub.log) == before


def test_dropped_connection_resumes_with_range(served: Served) -> None:
    served.hub.file(TARGET_REPO, TARGET_FILE).drop_after = 1_500_000
    result = DownloadJob(served.pair()).run()
    gets = served.hub.gets(TARGET_FILE)
    assert gets[0].range is None
    resumed = [g for g in gets if g.range and g.range.startswith("bytes=")]
    assert resumed, f"no Range request after the drop: {gets}"
    assert int(resumed[0].range.split("=")[1].rstrip("-")) > 0
    assert result.target_path is not None and result.target_path.read_bytes() == served.target


def test_interrupted_pull_is_resumed_by_the_next_pull(served: Served) -> None:
    """The connection drops mid-file and the Hub fails the retry: the pull fails, the next one resumes."""
    f = served.hub.file(TARGET_REPO, TARGET_FILE)
    f.drop_after, f.fail_resumes = 1_500_000, 1
    with pytest.raises(HubError, match="HTTP 500"):
        DownloadJob(served.pair()).run()
    kept = partial_of(served, TARGET_REPO, TARGET_FILE).stat().st_size
    assert 0 < kept < len(served.target)
    result = DownloadJob(served.pair()).run()
    assert served.hub.gets(TARGET_FILE)[-1].range == f"bytes={kept}-"
    assert result.files[0].resumed_from == kept
    assert result.target_path is not None and result.target_path.read_bytes() == served.target


def test_cancel_from_another_thread_then_resume(served: Served) -> None:
    served.hub.file(TARGET_REPO, TARGET_FILE).throttle = (128 * 1024, 0.02)
    cancel = threading.Event()
    started = threading.Event()

    def watch(p: Progress) -> None:
        if p.phase == "downloading" and p.file_done >= 1024 * 1024:
            started.set()

    def canceller() -> None:
        started.wait(10)
        cancel.set()

    t = threading.Thread(target=canceller)
    t.start()
    with pytest.raises(DownloadCancelled, match="resume"):
        DownloadJob(served.pair()).run(progress_cb=watch, cancel_event=cancel)
    t.join()
    partial = partial_of(served, TARGET_REPO, TARGET_FILE)
    kept = partial.stat().st_size
    assert 0 < kept < len(served.target)

    served.hub.file(TARGET_REPO, TARGET_FILE).throttle = None
    result = DownloadJob(served.pair()).run()
    last = served.hub.gets(TARGET_FILE)[-1]
    assert last.range == f"bytes={kept}-"
    assert result.files[0].resumed_from == kept and result.files[0].fetched == len(served.target) - kept
    assert result.target_path is not None and result.target_path.read_bytes() == served.target
    assert not partial.exists()


def test_killed_process_resumes(served: Served) -> None:
    """A pull killed with SIGKILL leaves its partial file; the next pull continues from there."""
    served.hub.file(TARGET_REPO, TARGET_FILE).throttle = (64 * 1024, 0.03)
    pair = served.pair()
    t, _d = pair.files()
    script = (
        "import sys; from atomicchat.models.catalog import FileRef; from atomicchat.models.downloads import DownloadJob;"
        f"DownloadJob(files=[FileRef('target','tiny-dflash','Q4_K_M',{TARGET_REPO!r},'main',{TARGET_FILE!r},"
        f"{t.size},{t.sha256!r},True)]).run()"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    child = subprocess.Popen([sys.executable, "-c", script], env=env, cwd=REPO_ROOT)
    partial = partial_of(served, TARGET_REPO, TARGET_FILE)
    deadline = time.monotonic() + 30
    try:
        while not (partial.exists() and partial.stat().st_size >= 1024 * 1024):
            assert child.poll() is None, "the child finished or failed before it could be killed"
            assert time.monotonic() < deadline, "the child never wrote a partial file"
            time.sleep(0.02)
    finally:
        child.kill()
        child.wait()
    kept = partial.stat().st_size
    assert kept < len(served.target)

    served.hub.file(TARGET_REPO, TARGET_FILE).throttle = None
    result = DownloadJob(pair).run()
    assert served.hub.gets(TARGET_FILE)[-1].range == f"bytes={kept}-"
    assert result.target_path is not None and result.target_path.read_bytes() == served.target


def test_checksum_mismatch_deletes_the_file(served: Served) -> None:
    served.hub.file(TARGET_REPO, TARGET_FILE).corrupt = True
    with pytest.raises(ChecksumMismatchError, match="deleted"):
        DownloadJob(served.pair()).run()
    blobs = cache_folder(TARGET_REPO) / "blobs"
    assert list(blobs.iterdir()) == []  # neither the partial nor a blob remains
    assert Registry().get(f"hf:{TARGET_REPO}/{TARGET_FILE}") is None


def test_catalog_sha_differing_from_hub_is_refused_before_download(served: Served) -> None:
    from dataclasses import replace

    t, d = served.pair().files()
    job = DownloadJob(files=[replace(t, sha256="0" * 64), d])
    with pytest.raises(CatalogOutdatedError, match="refresh the catalog"):
        job.run()
    assert served.hub.gets(TARGET_FILE) == []


def test_missing_file_is_a_clear_404(served: Served) -> None:
    with pytest.raises(NotFoundError, match="Tiny-Q8_0.gguf was not found in test-org/Tiny-GGUF"):
        DownloadJob(served.pair(), quant="Q8_0").run()


def test_missing_repo_is_a_clear_404(served: Served) -> None:
    from dataclasses import replace

    t, _ = served.pair().files()
    with pytest.raises(NotFoundError, match="repository nobody/nothing was not found"):
        DownloadJob(files=[replace(t, repo="nobody/nothing")]).run()


def test_gated_repo_says_how_to_get_access(served: Served) -> None:
    served.hub.repos[DRAFT_REPO].gated = True
    with pytest.raises(GatedError) as info:
        DownloadJob(served.pair()).run()
    msg = str(info.value)
    assert "gated" in msg and f"{served.hub.url}/{DRAFT_REPO}" in msg and "HF_TOKEN" in msg
    assert served.hub.gets(TARGET_FILE) == []  # nothing transferred before the error


def test_gated_repo_works_with_a_token(served: Served) -> None:
    served.hub.repos[DRAFT_REPO].gated = True
    result = DownloadJob(served.pair(), token=served.hub.token).run()
    assert result.paired
    assert all(r.auth for r in served.hub.gets(DRAFT_FILE))  # the token reached the file GET too


def test_rejected_token_is_an_auth_error(served: Served) -> None:
    with pytest.raises(AuthError, match="rejected the access token"):
        DownloadJob(served.pair(), token="hf_wrong").run()


def test_not_enough_disk_is_checked_before_any_byte(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(downloads.hardware, "free_disk_bytes", lambda path: 10 * 1024 * 1024)
    with pytest.raises(NotEnoughDiskError, match=r"needs 0\.00 GiB .* only 0\.01 GiB is free"):
        DownloadJob(served.pair()).run()
    assert served.hub.gets(TARGET_FILE) == [] and served.hub.gets(DRAFT_FILE) == []


def test_unreachable_hub_is_an_offline_error(served: Served) -> None:
    pair = served.pair()
    served.hub.stop()
    with pytest.raises(OfflineError, match="Cannot reach the Hugging Face Hub"):
        DownloadJob(pair).run()


def test_offline_mode_with_nothing_installed(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OfflineError, match="offline mode"):
        DownloadJob(served.pair()).run()
    assert served.hub.log == []


def test_file_already_in_cache_from_another_tool_is_verified_not_fetched(served: Served) -> None:
    from huggingface_hub import hf_hub_download

    hf_hub_download(TARGET_REPO, TARGET_FILE)
    hf_hub_download(DRAFT_REPO, DRAFT_FILE)
    before = len(served.hub.log)
    result = DownloadJob(served.pair(with_sha=False)).run()
    assert len(served.hub.log) == before
    assert all(f.already_present for f in result.files) and result.paired
    assert Registry().get(f"hf:{TARGET_REPO}/{TARGET_FILE}").verified  # sha256 taken from the blob name


def test_damaged_cached_file_is_detected_and_fetched_again(served: Served) -> None:
    result = DownloadJob(served.pair()).run()
    assert result.target_path is not None
    blob = Path(os.path.realpath(result.target_path))
    blob.write_bytes(b"\0" * len(served.target))  # same size, wrong bytes (bit rot, a bad copy)
    gets_before = len(served.hub.gets(TARGET_FILE))
    again = DownloadJob(served.pair()).run()
    assert len(served.hub.gets(TARGET_FILE)) == gets_before + 1
    assert again.target_path is not None and again.target_path.read_bytes() == served.target


def test_blob_left_without_its_link_is_reused_not_refetched(served: Served) -> None:
    result = DownloadJob(served.pair()).run()
    assert result.target_path is not None
    result.target_path.unlink()  # snapshot link gone (e.g. another tool pruned a revision)
    Registry().unlink_key(f"hf:{TARGET_REPO}/{TARGET_FILE}")
    again = DownloadJob(served.pair()).run()
    assert len(served.hub.gets(TARGET_FILE)) == 1  # only the first pull transferred it
    assert again.files[0].already_present and again.target_path == result.target_path
    assert again.target_path.read_bytes() == served.target


def test_pending_bytes_uses_local_state_only(served: Served) -> None:
    pair = served.pair()
    assert downloads.pending_bytes(DownloadJob(pair)) == len(served.target) + len(served.draft)
    DownloadJob(pair).run()
    before = len(served.hub.log)
    assert downloads.pending_bytes(DownloadJob(pair)) == 0
    assert len(served.hub.log) == before


def test_cancel_at_one_byte_a_second_takes_effect_within_a_second(served: Served) -> None:
    served.hub.file(TARGET_REPO, TARGET_FILE).throttle = (1, 1.0)  # 1 byte per second
    cancel = threading.Event()
    done: dict[str, float] = {}

    def run() -> None:
        try:
            DownloadJob(served.pair()).run(cancel_event=cancel)
        except DownloadCancelled:
            done["at"] = time.monotonic()

    t = threading.Thread(target=run)
    t.start()
    time.sleep(2.5)
    asked = time.monotonic()
    cancel.set()
    t.join(10)
    assert "at" in done and done["at"] - asked < 1.5  # within a read of the 1 B/s stream (bound, not a speed target)
    assert partial_of(served, TARGET_REPO, TARGET_FILE).stat().st_size >= 1  # the bytes that came are kept


def test_a_connection_cut_before_one_mib_keeps_every_byte(served: Served) -> None:
    f = served.hub.file(TARGET_REPO, TARGET_FILE)
    f.drop_after, f.fail_resumes = 260_000, 1  # cut after 260 KB, and the Hub fails the immediate retry
    with pytest.raises(HubError):
        DownloadJob(served.pair()).run()
    assert partial_of(served, TARGET_REPO, TARGET_FILE).stat().st_size == 260_000
    result = DownloadJob(served.pair()).run()
    assert served.hub.gets(TARGET_FILE)[-1].range == "bytes=260000-"
    assert result.target_path is not None and result.target_path.read_bytes() == served.target


@pytest.mark.parametrize("etag", ["../../escape", "a/b", "x" * 10_000])
def test_hostile_etags_never_become_file_names(served: Served, etag: str) -> None:
    served.hub.file(TARGET_REPO, TARGET_FILE).etag = etag
    with pytest.raises(HubError, match="unusable file id"):
        DownloadJob(served.pair()).run()
    home = Path(os.environ["HF_HOME"])
    assert not [p for p in home.rglob("*") if "escape" in p.name or len(p.name) > 255]


def test_redirect_to_a_link_local_address_is_refused_without_connecting(served: Served, monkeypatch) -> None:
    import socket

    served.hub.file(TARGET_REPO, TARGET_FILE).redirect_to = "http://169.254.169.254/latest/meta-data/"
    tried: list[object] = []
    real = socket.socket.connect

    def connect(sock, address):  # noqa: ANN001, ANN202
        if isinstance(address, tuple) and str(address[0]).startswith("169.254."):
            tried.append(address)
            raise AssertionError("connected to a link-local address")
        return real(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    with pytest.raises(HubError, match="link-local address"):
        DownloadJob(served.pair()).run()
    assert tried == []



def test_ctrl_c_in_the_cli_at_one_byte_a_second(served: Served, tmp_path) -> None:
    import json
    import signal

    from tests.models.conftest import catalog_dict

    served.hub.file(TARGET_REPO, TARGET_FILE).throttle = (1, 1.0)
    t = served.hub.file(TARGET_REPO, TARGET_FILE)
    d = served.hub.file(DRAFT_REPO, DRAFT_FILE)
    cat = tmp_path / "cat.json"
    cat.write_text(json.dumps(catalog_dict(t.sha256, d.sha256, (t.size, d.size))))
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), HF_ENDPOINT=served.hub.url)
    # A process started in the background by a shell without job control (`cmd &` in a script, as a CI
    # runner may start the tests) inherits SIGINT ignored, and Python then installs no Ctrl-C handler:
    # the child gets the disposition a terminal gives, as a user pressing Ctrl-C has.
    child = subprocess.Popen([sys.executable, "-m", "atomicchat", "models", "pull", "tiny-dflash", "--catalog", str(cat)],
                             env=env, cwd=REPO_ROOT, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    partial = partial_of(served, TARGET_REPO, TARGET_FILE)
    deadline = time.monotonic() + 30
    while not (partial.exists() and partial.stat().st_size >= 2) and time.monotonic() < deadline:
        time.sleep(0.05)
    asked = time.monotonic()
    child.send_signal(signal.SIGINT)
    try:
        _, err = child.communicate(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
    assert time.monotonic() - asked < 3 and child.returncode == 130  # a correctness bound at 1 B/s
    assert "Run the same command again to resume" in err and "Traceback" not in err
    assert partial.stat().st_size >= 2  # what arrived is on disk for the resume
