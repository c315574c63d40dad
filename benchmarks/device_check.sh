#!/usr/bin/env bash
# The GPU path end to end, in one command, on a machine with an NVIDIA GPU (issue 13 parts 2-3):
#   1. stops with a sentence unless nvidia-smi sees a GPU (--build-only: unless nvcc is there);
#   2. builds the sdist's vendored llama.cpp ONCE with CUDA (shared libraries; targets llama and
#      llama-server; needs nvcc and cuBLAS, not a GPU) and composes a bundle from it:
#        site/llama_cpp/      llama-cpp-python 0.3.36's Python package with these libraries in lib/
#        site/gguf, diskcache, platformdirs   pure Python, copied from --python's installation
#        bin/llama-server     the same commit's server
#      --build-only stops here (run it on a machine with nvcc and no GPU: a GPU lease is too short to
#      spend on compiling; it also packs the bundle as cuda-bundle.tar.xz beside it, small enough to
#      travel with a checkout to a lent GPU machine); --prebuilt DIR|TARBALL skips the build and uses
#      such a bundle (a tarball is unpacked into the work folder after the GPU check);
#   3. checks that the CUDA libraries resolve and that the Python side imports;
#   4. generates the Qwen3.5-9B stand-in (benchmarks/standin_9b.py) into the work folder;
#   5. runs `atomicchat bench` (atomicchat/cli/bench.py, which loads benchmarks/bench.py of this
#      checkout) cases a-e side by side with every layer on the GPU (--gpu-layers -1), as the app
#      runs them (host sampling: ATOMICCHAT_DEVICE_SAMPLING unset), with --overhead;
#   6. fails unless every engine case of that report ran on the GPU and sampled on the host;
#   7. runs cases a,b again with on-device sampling (ATOMICCHAT_DEVICE_SAMPLING=1), the comparison
#      that decides its default (engine/device_sampling.py), and checks that it sampled on the device;
#   8. benchmarks/host_overhead.py --gpu-layers -1: host µs per step outside llama_decode at the
#      248,320-token vocabulary, host sampling against on-device sampling, tokens compared;
#   9. benchmarks/idle_draft_cost.py on the stand-in: what a loaded draft costs plain steps (feature
#      taps, rollback snapshots), then benchmarks/adaptive_bench.py on it (target-only, fixed 1 and
#      15, adaptive, llama-server): the adaptive policy's figures on the GPU (issue 13).
# --setup-only stops after step 4: the machine is then ready for other benchmarks on the GPU.
# After step 3, WORKDIR/env.sh holds the LD_LIBRARY_PATH and PYTHONPATH of this build: source it to
# run other benchmarks on it (benchmarks/adaptive_bench.py --gpu-layers -1 --server-bin BUNDLE/bin/llama-server).
# Nothing here runs in CI; tests/bench/test_device_check.py checks --dry-run and the failures before
# any build. Until the GPU check passes the script uses nothing but bash builtins, so that failure
# path works with an empty PATH.
#
# usage: benchmarks/device_check.sh [--dry-run] [--build-only] [--setup-only] [--prebuilt DIR|TARBALL] [--workdir DIR]
#            [--sdist PATH] [--python PY] [--cuda-arch ARCH] [--jobs N] [--repeats N] [--prompts N]
#            [--max-tokens N] [--cases LIST] [--out DIR]
set -euo pipefail

here="${BASH_SOURCE[0]%/*}"
[[ "$here" == "${BASH_SOURCE[0]}" ]] && here="."
repo="$(cd "$here/.." && pwd)"

workdir="${HOME:-/tmp}/.cache/atomicchat/device-check"
sdist=""
base_python="python3"
cuda_arch="native"
jobs=""
repeats=3
prompts=3
max_tokens=128
cases="a,b,c,d,e"
prebuilt=""
out=""
dry_run=0
build_only=0
setup_only=0

die() { # exit code, sentence
    printf 'device_check: %s\n' "$2" >&2
    exit "$1"
}

usage() {
    local line
    while IFS= read -r line; do
        [[ "$line" == "# usage:"* ]] && { printf '%s\n' "${line#\# }"; continue; }
        [[ "$line" == "#            "* ]] && printf '%s\n' "${line#\#}"
    done <"${BASH_SOURCE[0]}"
    return 0
}

need_value() { # option, remaining arg count
    (($2 >= 2)) || die 2 "$1 needs a value."
}

while (($# > 0)); do
    case "$1" in
    --dry-run) dry_run=1 ;;
    --build-only) build_only=1 ;;
    --setup-only) setup_only=1 ;;
    -h | --help) usage; exit 0 ;;
    --prebuilt) need_value "$1" $#; prebuilt="$2"; shift ;;
    --workdir) need_value "$1" $#; workdir="$2"; shift ;;
    --sdist) need_value "$1" $#; sdist="$2"; shift ;;
    --python) need_value "$1" $#; base_python="$2"; shift ;;
    --cuda-arch) need_value "$1" $#; cuda_arch="$2"; shift ;;
    --jobs) need_value "$1" $#; jobs="$2"; shift ;;
    --repeats) need_value "$1" $#; repeats="$2"; shift ;;
    --prompts) need_value "$1" $#; prompts="$2"; shift ;;
    --max-tokens) need_value "$1" $#; max_tokens="$2"; shift ;;
    --cases) need_value "$1" $#; cases="$2"; shift ;;
    --out) need_value "$1" $#; out="$2"; shift ;;
    *) die 2 "unknown argument '$1' (see --help)." ;;
    esac
    shift
done

for pair in "jobs:$jobs" "repeats:$repeats" "prompts:$prompts" "max-tokens:$max_tokens"; do
    value="${pair#*:}"
    [[ -z "$value" || "$value" =~ ^[1-9][0-9]*$ ]] || die 2 "--${pair%%:*} must be a positive whole number, not '$value'."
done
((build_only && setup_only)) && die 2 "--build-only and --setup-only exclude each other: the setup needs a GPU."
((build_only)) && [[ -n "$prebuilt" ]] && die 2 "--build-only and --prebuilt exclude each other: one builds the bundle, the other uses one."

if [[ -z "$sdist" ]]; then
    for cand in "${HOME:-/tmp}/.cache/atomicchat/sdist/llama_cpp_python-0.3.36" \
        "${HOME:-/tmp}/.cache/atomicchat/sdist/llama_cpp_python-0.3.36.tar.gz"; do
        [[ -e "$cand" ]] && { sdist="$cand"; break; }
    done
    [[ -n "$sdist" ]] || sdist="${HOME:-/tmp}/.cache/atomicchat/sdist/llama_cpp_python-0.3.36.tar.gz"
fi

build="$workdir/cuda-build"
packed=0  # --prebuilt names a tarball of a bundle (cuda-bundle.tar.xz from --build-only)
[[ "$prebuilt" == *.tar.xz || "$prebuilt" == *.tar.gz || "$prebuilt" == *.tgz ]] && packed=1
set_bundle() { # the bundle's folder -> the paths in it
    bundle="$1"
    site="$bundle/site"
    libdir="$site/llama_cpp/lib"
    server="$bundle/bin/llama-server"
}
if ((packed)); then
    set_bundle "$workdir/prebuilt/cuda-bundle"
else
    set_bundle "${prebuilt:-$workdir/cuda-bundle}"
fi
models="$workdir/models"
target="$models/standin-qwen35-9b-target.Q4_K_M.gguf"
draft="$models/standin-qwen35-9b-draft.Q8_0.gguf"
report="$workdir/bench-gpu.json"
report_ds="$workdir/bench-gpu-device-sampling.json"
cmake_args="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$cuda_arch"
# GGML_CUDA_NO_VMM: no link against the driver's libcuda.so, so the build works where only the
# toolkit is installed (a build machine without a GPU); the memory pool then uses cudaMalloc.
cmake_args+=" -DGGML_CUDA_NO_VMM=ON -DBUILD_SHARED_LIBS=ON -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF"
cmake_args+=" -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_LLAMAFILE=OFF"  # as scripts/bootstrap.sh

plan() {
    printf 'device_check plan (repository %s):\n' "$repo"
    if ((build_only)); then
        printf '  1. build check: nvcc must be on PATH or in /usr/local/cuda/bin (no GPU needed)\n'
    else
        printf '  1. GPU check: nvidia-smi -L must list a GPU\n'
    fi
    if [[ -n "$prebuilt" ]]; then
        printf '  2. prebuilt bundle %s (from --build-only): nothing is compiled\n' "$prebuilt"
        ((packed)) && printf '     unpacked into %s/prebuilt after the GPU check\n' "$workdir"
    else
        printf '  2. one CUDA build of %s/vendor/llama.cpp into %s:\n' "$sdist" "$build"
        printf '     cmake %s; build --target llama llama-server\n' "$cmake_args"
        printf '     bundle %s: site/llama_cpp (the sdist'"'"'s package, lib/ = these libraries),\n' "$bundle"
        printf '     site/gguf, diskcache, platformdirs from %s, bin/llama-server\n' "$base_python"
    fi
    ((build_only)) && { printf '  (--build-only: stops after step 2)\n'; return 0; }
    printf '  3. check: ldd finds every library of %s/libggml-cuda.so (LD_LIBRARY_PATH gets the\n' "$libdir"
    printf '     CUDA runtime folders), %s imports llama_cpp, numpy, gguf with PYTHONPATH=%s:%s\n' "$base_python" "$site" "$repo"
    printf '  4. stand-in: python benchmarks/standin_9b.py --out-dir %s\n' "$models"
    ((setup_only)) && { printf '  (--setup-only: stops after step 4; source %s/env.sh for other benchmarks)\n' "$workdir"; return 0; }
    printf '  5. python -m atomicchat bench --target %s --draft %s --cases %s --gpu-layers -1\n' "$target" "$draft" "$cases"
    printf '     --server %s --repeats %s --prompts %s --max-tokens %s --overhead --json-out %s\n' \
        "$server" "$repeats" "$prompts" "$max_tokens" "$report"
    printf '     (atomicchat/cli/bench.py loads %s/benchmarks/bench.py; ATOMICCHAT_DEVICE_SAMPLING unset:\n' "$repo"
    printf '      host sampling, the default; n_gpu_layers=-1 for the engine and Llama, -ngl/-ngld 999 for llama-server)\n'
    printf '  6. check %s: every engine case ran on the GPU, sampling on the host\n' "$report"
    printf '  7. the same with ATOMICCHAT_DEVICE_SAMPLING=1, cases a,b: on-device sampling, checked in %s\n' "$report_ds"
    printf '  8. python benchmarks/host_overhead.py --gpu-layers -1: host vs on-device sampling at vocab 248,320\n'
    printf '  9. python benchmarks/idle_draft_cost.py and benchmarks/adaptive_bench.py --fixed 1,15 --draft-idle\n'
    printf '     on the stand-in, --gpu-layers -1 (adaptive_bench with --server-bin %s)\n' "$server"
    [[ -n "$out" ]] && printf '  every step'"'"'s output is also written to %s\n' "$out"
    return 0
}

gpu_check() { # prints the GPU list, or dies with a sentence
    command -v nvidia-smi >/dev/null 2>&1 ||
        die 3 "no NVIDIA GPU is visible: nvidia-smi is not on PATH, so this machine cannot run the GPU check."
    local gpus
    gpus="$(nvidia-smi -L 2>&1)" || die 3 "no NVIDIA GPU is visible: 'nvidia-smi -L' failed: $gpus"
    [[ "$gpus" == *"GPU "* ]] || die 3 "no NVIDIA GPU is visible: 'nvidia-smi -L' listed none ($gpus)."
    printf '%s\n' "$gpus"
}

find_nvcc() { # sets nvcc_bin or dies
    # The toolkit's own nvcc first: CMake finds the toolkit (cuBLAS, the runtime) from where nvcc
    # lies, and an `nvcc` on PATH can be a wrapper script elsewhere (/usr/local/bin/nvcc, say).
    nvcc_bin=/usr/local/cuda/bin/nvcc
    [[ -x "$nvcc_bin" ]] || nvcc_bin="$(command -v nvcc || true)"
    [[ -n "$nvcc_bin" ]] || die 3 "the CUDA toolkit is missing: nvcc is neither on PATH nor in /usr/local/cuda/bin."
}

if ((dry_run)); then
    plan
    if ((build_only)); then
        :
    elif command -v nvidia-smi >/dev/null 2>&1; then
        printf 'GPU check: nvidia-smi found; a real run lists the GPUs and goes on.\n'
    else
        printf 'GPU check: nvidia-smi is not on PATH; a real run would stop here (exit 3).\n'
    fi
    exit 0
fi

if ((build_only)); then
    printf '== 1. build check (no GPU needed)\n'
    find_nvcc
    printf 'nvcc: %s\n' "$nvcc_bin"
else
    printf '== 1. GPU check\n'
    gpu_check
fi
if ((packed)); then
    [[ -f "$prebuilt" ]] || die 4 "--prebuilt $prebuilt: no such tarball (make one with --build-only)."
    rm -rf "$workdir/prebuilt"
    mkdir -p "$workdir/prebuilt"
    # Python's tarfile, not tar: it needs no xz program on the GPU machine
    "$base_python" -c 'import sys, tarfile; t = tarfile.open(sys.argv[1]); t.extraction_filter = getattr(tarfile, "fully_trusted_filter", None); t.extractall(sys.argv[2])' \
        "$prebuilt" "$workdir/prebuilt" || die 4 "--prebuilt $prebuilt: the tarball does not unpack."
    [[ -f "$libdir/libllama.so" ]] ||
        die 4 "--prebuilt $prebuilt holds no cuda-bundle/site/llama_cpp/lib/libllama.so (make one with --build-only)."
fi
[[ -z "$prebuilt" || -f "$libdir/libllama.so" ]] ||
    die 4 "--prebuilt $prebuilt is not a bundle: $libdir/libllama.so is missing (make one with --build-only)."
[[ -n "$prebuilt" || -e "$sdist" ]] || die 4 "the llama-cpp-python 0.3.36 sdist is not at $sdist (pass --sdist PATH)."
jobs="${jobs:-$(nproc)}"
[[ -n "$out" ]] && mkdir -p "$out"
log() { # step name: tee the step's output into --out when given
    if [[ -n "$out" ]]; then tee "$out/$1.log"; else cat; fi
}

if [[ -z "$prebuilt" ]]; then
    printf '== 2. one CUDA build of llama.cpp (%s)\n' "$build"
    [[ -n "${nvcc_bin:-}" ]] || find_nvcc  # --build-only found it in step 1
    mkdir -p "$workdir"
    src="$sdist"
    if [[ ! -d "$sdist" ]]; then
        src="$workdir/llama_cpp_python-0.3.36"
        rm -rf "$src"
        tar -xzf "$sdist" -C "$workdir"
    fi
    configured=0
    # shellcheck disable=SC2086  # cmake_args is a list of -D flags
    cmake -S "$src/vendor/llama.cpp" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_COMPILER="$nvcc_bin" $cmake_args >"$workdir/cmake.log" 2>&1 && configured=1
    cat "$workdir/cmake.log"
    if ((!configured)); then
        # A toolkit of nvcc and the runtime alone (this project's 2-core EPYC, 2026-12-06) configures
        # the CPU side and then fails on ggml-cuda's link to cuBLAS, in CMake's words.
        if [[ "$(<"$workdir/cmake.log")" == *"CUDA::cublas"* ]]; then
            die 6 "the CUDA toolkit of $nvcc_bin has no cuBLAS (CMake found no CUDA::cublas), which llama.cpp's CUDA backend links: install the toolkit's cuBLAS (its libraries and headers), or build on the GPU machine."
        fi
        die 6 "CMake could not configure the CUDA build (its output is above and in $workdir/cmake.log)."
    fi
    cmake --build "$build" -j "$jobs" --target llama llama-server
    rm -rf "$bundle"
    mkdir -p "$libdir" "$bundle/bin"
    cp -r "$src/llama_cpp/." "$site/llama_cpp/"
    rm -rf "$site/llama_cpp/server"
    cp -a "$build"/bin/*.so* "$libdir/"  # -a: the soname links stay links (not three copies)
    cp "$build"/bin/llama-server "$bundle/bin/"
    if command -v strip >/dev/null 2>&1; then  # symbols are not needed to run (the CUDA library: 67 -> 60 MB)
        find "$libdir" "$bundle/bin" -type f \( -name '*.so*' -o -name llama-server \) -exec strip --strip-unneeded {} +
    fi
    [[ -f "$libdir/libllama.so" && -f "$libdir/libggml-cuda.so" ]] ||
        die 6 "the build did not leave libllama.so and libggml-cuda.so in $build/bin."
    mkdir -p "$site/llama_cpp_python-0.3.36.dist-info"
    printf 'Metadata-Version: 2.1\nName: llama_cpp_python\nVersion: 0.3.36\n' \
        >"$site/llama_cpp_python-0.3.36.dist-info/METADATA"
    # gguf (the stand-in writer), diskcache (imported by llama_cpp.Llama) and platformdirs (atomicchat.paths)
    # are pure Python: carry the builder's copies, so a GPU machine with no package index needs nothing.
    for mod in gguf diskcache platformdirs; do
        path="$("$base_python" -c "import $mod, os; print(os.path.dirname($mod.__file__))" 2>/dev/null)" &&
            cp -r "$path" "$site/" || printf 'note: %s has no %s to carry\n' "$base_python" "$mod"
    done
    find "$site" -name __pycache__ -prune -exec rm -rf {} +
    du -sh "$bundle"
    if ((build_only)); then
        # xz -9: 75 MB -> 43 MB for sm_90 (2026-12-06), small enough to travel with a slimmed checkout
        tar -C "$(dirname "$bundle")" -cf - "$(basename "$bundle")" | xz -9 -T0 >"$bundle.tar.xz"
        du -sh "$bundle.tar.xz"
        printf 'bundle ready: %s and %s.tar.xz (copy either to the GPU machine; run this script there with --prebuilt)\n' \
            "$bundle" "$bundle"
        exit 0
    fi
else
    printf '== 2. prebuilt bundle %s\n' "$bundle"
fi

printf '== 3. libraries and Python imports (%s s)\n' "$SECONDS"
# The CUDA runtime and cuBLAS: the toolkit's folders and any pip wheels (nvidia/*/lib) of the Python.
cuda_dirs="$("$base_python" - <<'EOF'
import glob, os, site, sys
dirs = ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"]
for base in site.getsitepackages() + [site.getusersitepackages()] + sys.path:
    dirs += sorted(glob.glob(os.path.join(base, "nvidia", "*", "lib")))
print(":".join(d for d in dict.fromkeys(dirs) if os.path.isdir(d)))
EOF
)"
export LD_LIBRARY_PATH="$libdir:$cuda_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
missing="$(ldd "$libdir/libggml-cuda.so" "$server" | grep 'not found' || true)"
[[ -z "$missing" ]] || die 5 "libraries the CUDA build needs are not on this machine: $missing"
export PYTHONPATH="$site:$repo"
py="$base_python"
mkdir -p "$workdir"
printf 'export LD_LIBRARY_PATH=%q PYTHONPATH=%q\n' "$LD_LIBRARY_PATH" "$PYTHONPATH" >"$workdir/env.sh"
rc=0
"$py" - <<'EOF' || rc=$?
import sys
import gguf, numpy, llama_cpp
ok = bool(llama_cpp.llama_supports_gpu_offload())
print(f"python {sys.version.split()[0]}; numpy {numpy.__version__}; llama_cpp from {llama_cpp.__file__}: "
      f"GPU offload {'yes' if ok else 'NO'}")
sys.exit(0 if ok else 42)
EOF
((rc != 42)) || die 5 "llama.cpp sees no GPU through this build (its ggml_cuda_init line above says why)."
((rc == 0)) || die 5 "the Python side does not import (above); carry the missing package in the bundle's site/."
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

printf '== 4. the Qwen3.5-9B stand-in (%s; %s s)\n' "$models" "$SECONDS"
cd "$repo"
"$py" benchmarks/standin_9b.py --out-dir "$models" --threads "$jobs" 2>&1 | log standin
if ((setup_only)); then
    printf 'set up (%s s): source %s/env.sh, then run benchmarks on %s and %s\n' "$SECONDS" "$workdir" "$target" "$draft"
    exit 0
fi

printf '== 5. atomicchat bench, cases %s, every layer on the GPU, as the app runs (%s s)\n' "$cases" "$SECONDS"
rm -f "$report" "$report_ds"
(
    unset ATOMICCHAT_DEVICE_SAMPLING  # the engine's default (host sampling), not an inherited choice
    "$py" -m atomicchat bench --target "$target" --draft "$draft" --cases "$cases" \
        --gpu-layers -1 --server "$server" --repeats "$repeats" --prompts "$prompts" \
        --max-tokens "$max_tokens" --overhead --json-out "$report" 2>&1 | log bench
)
[[ -n "$out" && -f "$report" ]] && cp "$report" "$out/"

printf '== 6. every engine case ran on the GPU, sampling on the host (%s s)\n' "$SECONDS"
"$py" -m benchmarks.bench --check-gpu-report "$report" host ||
    die 7 "the engine did not run on the GPU as the app would (see above)."

printf '== 7. the same engine cases a,b with on-device sampling (ATOMICCHAT_DEVICE_SAMPLING=1) (%s s)\n' "$SECONDS"
ATOMICCHAT_DEVICE_SAMPLING=1 "$py" -m atomicchat bench --target "$target" --draft "$draft" --cases a,b \
    --gpu-layers -1 --repeats "$repeats" --prompts "$prompts" --max-tokens "$max_tokens" --overhead \
    --json-out "$report_ds" 2>&1 | log bench_device_sampling
[[ -n "$out" && -f "$report_ds" ]] && cp "$report_ds" "$out/"
"$py" -m benchmarks.bench --check-gpu-report "$report_ds" device ||
    die 7 "on-device sampling did not run on the GPU (see above)."

printf '== 8. host time per step outside llama_decode, vocab 248,320, on the GPU (%s s)\n' "$SECONDS"
"$py" benchmarks/host_overhead.py --gpu-layers -1 --cache "$models" 2>&1 | log host_overhead
printf '== 9. a loaded draft on plain steps, and the adaptive draft length, on the GPU (%s s)\n' "$SECONDS"
"$py" benchmarks/idle_draft_cost.py --pair "$target,$draft" --gpu-layers -1 --prompts "$prompts" \
    --max-tokens "$max_tokens" --repeats "$repeats" 2>&1 | log idle_draft_cost
"$py" benchmarks/adaptive_bench.py --cases none --pair "standin=$target,$draft" --gpu-layers -1 \
    --server-bin "$server" --fixed 1,15 --draft-idle --prompts "$prompts" --max-tokens "$max_tokens" \
    --repeats "$repeats" --logs "$workdir/logs" --json "$workdir/adaptive-gpu.json" 2>&1 | log adaptive_bench
[[ -n "$out" && -f "$workdir/adaptive-gpu.json" ]] && cp "$workdir/adaptive-gpu.json" "$out/"
printf "== done (%s s)\n" "$SECONDS"
