"""benchmarks/device_tree.sh on a throwaway git repository: what a GPU lease would carry, and the
slim that leaves the shipped SmolLM2 draft behind and the restore that puts it back exactly."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "device_tree.sh"
BASH = shutil.which("bash") or "/bin/bash"
GIT = shutil.which("git")
DRAFT = "resources/smollm2/SmolLM2-135M-Instruct-DFlash.F16.gguf"

pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run([GIT, *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def _tree(cmd: list[str], repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BASH, str(SCRIPT), *cmd], cwd=repo, capture_output=True, text=True, timeout=60)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "checkout"
    (r / "resources" / "smollm2").mkdir(parents=True)
    (r / "resources" / "demo").mkdir(parents=True)
    (r / DRAFT).write_bytes(b"\x01" * (3 << 20))  # 3 MiB
    (r / "resources" / "demo" / "demo-target.F32.gguf").write_bytes(b"\x02" * (1 << 20))
    (r / "README.md").write_text("readme\n")
    _git(r, "init", "-q")
    _git(r, "add", ".")
    _git(r, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    return r


def _mib(out: str) -> float:
    return float(out.split("would travel: ")[1].split(" MiB")[0])


def test_size_counts_tracked_and_unignored_untracked_files(repo: Path):
    r = _tree(["size"], repo)
    assert r.returncode == 0, r.stderr
    assert _mib(r.stdout) == pytest.approx(4.0, abs=0.05)
    assert DRAFT in r.stderr.splitlines()[0]  # the largest file first
    (repo / "scratch.bin").write_bytes(b"\0" * (1 << 20))  # untracked, not ignored: it travels too
    assert _mib(_tree(["size"], repo).stdout) == pytest.approx(5.0, abs=0.05)
    (repo / ".git" / "info" / "exclude").write_text("/.gpu/\n")
    (repo / ".gpu").mkdir()
    (repo / ".gpu" / "bundle.tar.xz").write_bytes(b"\0" * (2 << 20))  # ignored: only when carried
    assert _mib(_tree(["size"], repo).stdout) == pytest.approx(5.0, abs=0.05)
    r = _tree(["size", ".gpu"], repo)
    assert _mib(r.stdout) == pytest.approx(7.0, abs=0.05) and "limit 64 MiB" in r.stdout
    r = _tree(["size", ".nothing"], repo)
    assert r.returncode == 1 and "does not exist" in r.stderr


def test_slim_leaves_the_draft_on_disk_out_of_what_travels_and_restore_undoes_it(repo: Path):
    before = (repo / DRAFT).read_bytes()
    r = _tree(["slim"], repo)
    assert r.returncode == 0, r.stderr
    assert _mib(r.stdout) == pytest.approx(1.0, abs=0.05)
    assert "commit nothing" in r.stdout
    assert DRAFT not in _git(repo, "ls-files", "--cached")
    assert DRAFT not in _git(repo, "ls-files", "--others", "--exclude-standard")  # ignored: it stays behind
    assert (repo / DRAFT).read_bytes() == before
    again = _tree(["slim"], repo)
    assert again.returncode == 1 and "already in effect" in again.stderr
    r = _tree(["restore"], repo)
    assert r.returncode == 0, r.stderr
    assert _git(repo, "status", "--porcelain") == ""
    assert DRAFT in _git(repo, "ls-files", "--cached")
    assert "device_tree" not in (repo / ".git" / "info" / "exclude").read_text()
    assert "nothing to restore" in _tree(["restore"], repo).stdout


def test_slim_refuses_a_changed_or_untracked_path(repo: Path):
    (repo / DRAFT).write_bytes(b"changed")
    r = _tree(["slim"], repo)
    assert r.returncode == 1 and "has changes" in r.stderr
    assert DRAFT in _git(repo, "ls-files", "--cached")  # nothing was done
    r = _tree(["slim", "resources/nothing.gguf"], repo)
    assert r.returncode == 1 and "not a tracked file" in r.stderr


def test_slim_takes_named_paths(repo: Path):
    demo = "resources/demo/demo-target.F32.gguf"
    r = _tree(["slim", DRAFT, demo], repo)
    assert r.returncode == 0, r.stderr
    assert _mib(r.stdout) == pytest.approx(0.0, abs=0.05)
    assert _tree(["restore"], repo).returncode == 0
    assert _git(repo, "status", "--porcelain") == ""


def test_outside_a_checkout_or_without_a_command_it_says_so(tmp_path: Path, repo: Path):
    r = _tree(["size"], tmp_path)
    assert r.returncode == 2 and "not inside a git checkout" in r.stderr
    r = _tree([], repo)
    assert r.returncode == 2 and "size, slim" in r.stderr


def test_this_checkout_fits_a_lease_once_slimmed():
    """What the default slim leaves of this checkout's tracked files must fit the 64 MiB a GPU lease
    carries, with room for the run's own files: when it does not, benchmarks/device_check.sh cannot
    run on a lent GPU at all (2026-12-06: 86.2 MiB tracked, 43.5 once slimmed)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = _git(ROOT, "ls-files", "-z", "--cached").split("\0")
    shipped = set(_git(ROOT, "ls-files", "-z", "--", "resources/smollm2/*.gguf").split("\0")) - {""}
    assert shipped, "the default slim has nothing to leave behind"
    kept = sum((ROOT / f).stat().st_size for f in tracked if f and f not in shipped and (ROOT / f).is_file())
    assert kept < 56 << 20, f"{kept / (1 << 20):.1f} MiB tracked once slimmed: over what a lease can carry"
