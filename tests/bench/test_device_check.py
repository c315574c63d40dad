"""benchmarks/device_check.sh without a GPU: the plan, argument errors, and the loud stops.

Nothing is built here: --dry-run only prints, the real run must stop at the GPU check (before it
creates its work folder) when nvidia-smi is not on PATH, a --prebuilt folder that is no bundle is
refused before anything runs, and --build-only without the sdist stops before compiling.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "device_check.sh"
BASH = shutil.which("bash") or "/bin/bash"


def _run(args: list[str], tmp_path: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(tmp_path / "home"), "PATH": path if path is not None else str(tmp_path / "empty-bin")}
    (tmp_path / "empty-bin").mkdir(exist_ok=True)
    return subprocess.run([BASH, str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=60)


def test_dry_run_prints_the_cuda_build_and_gpu_bench_plan(tmp_path: Path):
    work = tmp_path / "work"
    r = _run(["--dry-run", "--workdir", str(work), "--repeats", "2", "--cases", "a,b,c,d,e"], tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for part in ("-DGGML_CUDA=on", "-DBUILD_SHARED_LIBS=ON", "--target llama llama-server", "site/llama_cpp",
                 "standin_9b.py", "atomicchat bench", "--cases a,b,c,d,e", "--gpu-layers -1", "--repeats 2",
                 str(work), f"{ROOT}/benchmarks/bench.py", "ATOMICCHAT_DEVICE_SAMPLING unset",
                 "on-device sampling", "host_overhead.py --gpu-layers -1", "idle_draft_cost.py",
                 "adaptive_bench.py --fixed 1,15 --draft-idle"):  # fmt: skip
        assert part in out, part
    assert out.count("cmake ") == 1  # one build serves the Python package and the server
    assert "would stop here" in out  # no nvidia-smi on this PATH
    assert not work.exists()  # a dry run creates nothing


def test_build_only_plan_stops_after_the_bundle_and_prebuilt_skips_the_build(tmp_path: Path):
    r = _run(["--dry-run", "--build-only", "--workdir", str(tmp_path / "w")], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "nvcc" in r.stdout and "no GPU needed" in r.stdout and "stops after step 2" in r.stdout
    assert "atomicchat bench" not in r.stdout and "nvidia-smi" not in r.stdout
    r = _run(["--dry-run", "--prebuilt", str(tmp_path / "b"), "--workdir", str(tmp_path / "w")], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "nothing is compiled" in r.stdout and "cmake " not in r.stdout
    assert f"{tmp_path / 'b'}/bin/llama-server" in r.stdout
    assert not (tmp_path / "w").exists()


def _fake_bin(tmp_path: Path, name: str, body: str) -> Path:
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / name
    fake.write_text(f"#!{BASH}\n{body}\n")
    fake.chmod(0o755)
    return bin_dir


def test_a_prebuilt_folder_that_is_no_bundle_is_refused_before_anything_runs(tmp_path: Path):
    bin_dir = _fake_bin(tmp_path, "nvidia-smi", "echo 'GPU 0: NVIDIA H200 (UUID: GPU-0)'")
    (tmp_path / "not-a-bundle").mkdir()
    work = tmp_path / "work"
    r = _run(["--prebuilt", str(tmp_path / "not-a-bundle"), "--workdir", str(work)], tmp_path, path=str(bin_dir))
    assert r.returncode == 4
    assert "is not a bundle" in r.stderr and "libllama.so is missing" in r.stderr and "--build-only" in r.stderr
    assert not work.exists()


def test_build_only_without_the_sdist_stops_before_compiling(tmp_path: Path):
    bin_dir = _fake_bin(tmp_path, "nvcc", "exit 0")
    work = tmp_path / "work"
    r = _run(["--build-only", "--workdir", str(work), "--sdist", str(tmp_path / "missing.tar.gz")], tmp_path,
             path=str(bin_dir))  # fmt: skip
    assert r.returncode == 4
    assert "sdist is not at" in r.stderr and "--sdist" in r.stderr
    assert not work.exists()


def test_without_nvidia_smi_it_stops_with_a_sentence(tmp_path: Path):
    work = tmp_path / "work"
    r = _run(["--workdir", str(work)], tmp_path)
    assert r.returncode == 3
    assert "no NVIDIA GPU is visible" in r.stderr and "nvidia-smi" in r.stderr
    assert r.stderr.strip().endswith(".")
    assert not work.exists()  # it stopped before building anything


def test_an_nvidia_smi_that_lists_no_gpu_also_stops(tmp_path: Path):
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    fake = bin_dir / "nvidia-smi"
    fake.write_text(f"#!{BASH}\necho 'No devices were found'\nexit 6\n")
    fake.chmod(0o755)
    work = tmp_path / "work"
    r = _run(["--workdir", str(work)], tmp_path, path=str(bin_dir))
    assert r.returncode == 3
    assert "no NVIDIA GPU is visible" in r.stderr and "No devices were found" in r.stderr
    assert not work.exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--bogus"], "unknown argument '--bogus'"),
        (["--workdir"], "--workdir needs a value"),
        (["--jobs", "two"], "--jobs must be a positive whole number"),
        (["--repeats", "0"], "--repeats must be a positive whole number"),
        (["--build-only", "--prebuilt", "x"], "exclude each other"),
    ],
)
def test_bad_arguments_exit_2_with_the_reason(tmp_path: Path, args: list[str], needle: str):
    r = _run([*args, "--dry-run"] if args != ["--workdir"] else args, tmp_path)
    assert r.returncode == 2
    assert needle in r.stderr


def test_help_shows_the_usage(tmp_path: Path):
    r = _run(["--help"], tmp_path)
    assert r.returncode == 0
    assert "usage: benchmarks/device_check.sh" in r.stdout and "--dry-run" in r.stdout


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_shellcheck_clean():
    r = subprocess.run(["shellcheck", "-x", str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_real_run_calls_this_layouts_paths_and_checks_device_sampling():
    """The commands past the GPU check (not run here): the bench through `-m atomicchat bench` with the
    checkout on PYTHONPATH (atomicchat/cli/bench.py loads benchmarks/bench.py), the stand-in generator
    at benchmarks/standin_9b.py, and step 6 checking the report for on-device sampling."""
    text = SCRIPT.read_text()
    assert (ROOT / "benchmarks" / "standin_9b.py").is_file() and "benchmarks/standin_9b.py" in text
    assert (ROOT / "benchmarks" / "bench.py").is_file() and (ROOT / "atomicchat" / "cli" / "bench.py").is_file()
    assert '-m atomicchat bench --target "$target"' in text and "--gpu-layers -1" in text
    assert "unset ATOMICCHAT_DEVICE_SAMPLING" in text
    assert (ROOT / "benchmarks" / "host_overhead.py").is_file() and "benchmarks/host_overhead.py --gpu-layers -1" in text
    assert '-m benchmarks.bench --check-gpu-report "$report" host' in text  # as the app runs: host sampling
    assert 'ATOMICCHAT_DEVICE_SAMPLING=1 "$py" -m atomicchat bench' in text
    assert '--check-gpu-report "$report_ds" device' in text
    assert "atomicchat/bench.py" not in text.replace("atomicchat/cli/bench.py", "")


def test_setup_only_plan_stops_after_the_stand_in_and_excludes_build_only(tmp_path: Path):
    r = _run(["--dry-run", "--setup-only", "--prebuilt", str(tmp_path / "b"), "--workdir", str(tmp_path / "w")],
             tmp_path)
    assert r.returncode == 0, r.stderr
    assert "4. stand-in" in r.stdout and "stops after step 4" in r.stdout and f"{tmp_path / 'w'}/env.sh" in r.stdout
    assert "atomicchat bench" not in r.stdout and "host_overhead" not in r.stdout
    r = _run(["--dry-run", "--setup-only", "--build-only"], tmp_path)
    assert r.returncode == 2 and "exclude each other" in r.stderr


def test_a_toolkit_without_cublas_stops_with_a_sentence_after_cmake_says_so(tmp_path: Path):
    """A toolkit of nvcc and the runtime alone (the 2-core EPYC, 2026-12-06): CMake configures the CPU
    side, then fails on ggml-cuda's link to cuBLAS; the script names the missing part."""
    bin_dir = _fake_bin(tmp_path, "nvcc", "exit 0")
    cmake_error = ("CMake Error at ggml/src/ggml-cuda/CMakeLists.txt:178 (target_link_libraries):\\n"
                   '  Target "ggml-cuda" links to:\\n\\n    CUDA::cublas\\n\\n  but the target was not found.\\n')
    _fake_bin(tmp_path, "cmake", f"printf '{cmake_error}'; exit 1")
    sdist = tmp_path / "sdist"
    (sdist / "vendor" / "llama.cpp").mkdir(parents=True)
    work = tmp_path / "work"
    path = f"{bin_dir}:/usr/bin:/bin"
    r = _run(["--build-only", "--workdir", str(work), "--sdist", str(sdist)], tmp_path, path=path)
    assert r.returncode == 6, r.stdout + r.stderr
    assert "has no cuBLAS" in r.stderr and "build on the GPU machine" in r.stderr
    assert "CUDA::cublas" in r.stdout  # CMake's own words are shown too
    _fake_bin(tmp_path, "cmake", "echo 'CMake Error: something else'; exit 1")
    r = _run(["--build-only", "--workdir", str(work), "--sdist", str(sdist)], tmp_path, path=path)
    assert r.returncode == 6 and "could not configure the CUDA build" in r.stderr and "cuBLAS" not in r.stderr


def _bundle_tarball(tmp_path: Path, with_lib: bool = True) -> Path:
    """A stand-in for --build-only's cuda-bundle.tar.xz: the layout, a llama_cpp that finds no GPU."""
    root = tmp_path / "pack" / "cuda-bundle"
    lib = root / "site" / "llama_cpp" / "lib"
    lib.mkdir(parents=True)
    (root / "bin").mkdir()
    (root / "bin" / "llama-server").write_text("")
    if with_lib:
        (lib / "libllama.so").write_text("")
        (lib / "libggml-cuda.so").write_text("")
    (root / "site" / "llama_cpp" / "__init__.py").write_text("def llama_supports_gpu_offload():\n    return False\n")
    (root / "site" / "gguf").mkdir()
    (root / "site" / "gguf" / "__init__.py").write_text("")
    out = tmp_path / "cuda-bundle.tar.xz"
    with tarfile.open(out, "w:xz") as t:
        t.add(root, arcname="cuda-bundle")
    return out


def test_a_prebuilt_tarball_is_unpacked_after_the_gpu_check_and_used(tmp_path: Path):
    bin_dir = _fake_bin(tmp_path, "nvidia-smi", "echo 'GPU 0: NVIDIA H200 (UUID: GPU-0)'")
    work = tmp_path / "work"
    tarball = _bundle_tarball(tmp_path)
    r = _run(["--prebuilt", str(tarball), "--workdir", str(work), "--python", sys.executable], tmp_path,
             path=f"{bin_dir}:/usr/bin:/bin")
    # unpacked, its Python side imported, and its llama_cpp asked: this stand-in finds no GPU
    assert r.returncode == 5, r.stdout + r.stderr
    assert "sees no GPU through this build" in r.stderr
    assert (work / "prebuilt" / "cuda-bundle" / "site" / "llama_cpp" / "lib" / "libllama.so").is_file()
    assert "cmake" not in r.stdout.lower()  # nothing compiled


def test_a_prebuilt_tarball_without_the_library_or_missing_is_refused(tmp_path: Path):
    bin_dir = _fake_bin(tmp_path, "nvidia-smi", "echo 'GPU 0: NVIDIA H200 (UUID: GPU-0)'")
    path = f"{bin_dir}:/usr/bin:/bin"
    r = _run(["--prebuilt", str(_bundle_tarball(tmp_path, with_lib=False)), "--workdir", str(tmp_path / "w"),
              "--python", sys.executable], tmp_path, path=path)
    assert r.returncode == 4 and "holds no cuda-bundle/site/llama_cpp/lib/libllama.so" in r.stderr
    r = _run(["--prebuilt", str(tmp_path / "none.tar.xz"), "--workdir", str(tmp_path / "w")], tmp_path, path=path)
    assert r.returncode == 4 and "no such tarball" in r.stderr
    r = _run(["--dry-run", "--prebuilt", str(tmp_path / "b.tar.xz"), "--workdir", str(tmp_path / "w2")], tmp_path)
    assert r.returncode == 0 and "unpacked into" in r.stdout and not (tmp_path / "w2").exists()
