#!/usr/bin/env bash
# The GPU path end to end, in one command, on a machine with an NVIDIA GPU (issue 13 part 3):
#   1. stops with a sentence unless nvidia-smi sees a GPU and the CUDA toolkit (nvcc) is present;
#   2. builds the CUDA variant of llama-cpp-python 0.3.36 (CMAKE_ARGS="-DGGML_CUDA=on") from the
#      cached sdist into a FRESH venv (offline: --no-index; numpy, gguf, ... come from the base
#      Python through --system-site-packages, or from --wheelhouse);
#   3. builds llama-server with CUDA from the same sdist's vendored llama.cpp (same commit);
#   4. generates the Qwen3.5-9B stand-in (benchmarks/standin_9b.py) into that venv's work folder;
#   5. runs `atomicchat bench` (atomicchat/cli/bench.py, which loads benchmarks/bench.py of this
#      checkout) cases a-e side by side with every layer on the GPU (--gpu-layers -1) and prints its
#      table. On-device sampling follows from the offloaded layers (EngineConfig.device_sampling is
#      None, so it is on when layers run on the GPU); ATOMICCHAT_DEVICE_SAMPLING is unset for the run
#      so that an inherited 0 cannot turn it off;
#   6. fails unless every engine case of the report ran on the GPU and sampled on the device.
# Nothing here runs in CI; tests/benchmarks/test_device_check.py checks --dry-run and the no-GPU
# failure only. Until the GPU check passes the script uses nothing but bash builtins, so that
# failure path works with an empty PATH.
#
# usage: benchmarks/device_check.sh [--dry-run] [--workdir DIR] [--sdist PATH] [--python PY]
#            [--wheelhouse DIR] [--cuda-arch ARCH] [--jobs N] [--repeats N] [--prompts N]
#            [--max-tokens N] [--cases LIST]
set -euo pipefail

here="${BASH_SOURCE[0]%/*}"
[[ "$here" == "${BASH_SOURCE[0]}" ]] && here="."
repo="$(cd "$here/.." && pwd)"

workdir="${HOME:-/tmp}/.cache/atomicchat/device-check"
sdist=""
base_python="python3"
wheelhouse=""
cuda_arch="native"
jobs=""
repeats=3
prompts=3
max_tokens=128
cases="a,b,c,d,e"
dry_run=0

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
    -h | --help) usage; exit 0 ;;
    --workdir) need_value "$1" $#; workdir="$2"; shift ;;
    --sdist) need_value "$1" $#; sdist="$2"; shift ;;
    --python) need_value "$1" $#; base_python="$2"; shift ;;
    --wheelhouse) need_value "$1" $#; wheelhouse="$2"; shift ;;
    --cuda-arch) need_value "$1" $#; cuda_arch="$2"; shift ;;
    --jobs) need_value "$1" $#; jobs="$2"; shift ;;
    --repeats) need_value "$1" $#; repeats="$2"; shift ;;
    --prompts) need_value "$1" $#; prompts="$2"; shift ;;
    --max-tokens) need_value "$1" $#; max_tokens="$2"; shift ;;
    --cases) need_value "$1" $#; cases="$2"; shift ;;
    *) die 2 "unknown argument '$1' (see --help)." ;;
    esac
    shift
done

for pair in "jobs:$jobs" "repeats:$repeats" "prompts:$prompts" "max-tokens:$max_tokens"; do
    value="${pair#*:}"
    [[ -z "$value" || "$value" =~ ^[1-9][0-9]*$ ]] || die 2 "--${pair%%:*} must be a positive whole number, not '$value'."
done

if [[ -z "$sdist" ]]; then
    for cand in "${HOME:-/tmp}/.cache/atomicchat/sdist/llama_cpp_python-0.3.36.tar.gz" \
        "${HOME:-/tmp}/.cache/atomicchat/sdist/llama_cpp_python-0.3.36"; do
        [[ -e "$cand" ]] && { sdist="$cand"; break; }
    done
    [[ -n "$sdist" ]] || sdist="${HOME:-/tmp}/.cache/atomicchat/sdist/llama_cpp_python-0.3.36.tar.gz"
fi

venv="$workdir/venv-cuda"
src="$workdir/llama_cpp_python-0.3.36"
server_build="$workdir/llama-server-cuda"
server="$server_build/bin/llama-server"
models="$workdir/models"
target="$models/standin-qwen35-9b-target.Q4_K_M.gguf"
draft="$models/standin-qwen35-9b-draft.Q8_0.gguf"
report="$workdir/bench-gpu.json"
cmake_args="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$cuda_arch"
find_links=(--find-links "${sdist%/*}")
[[ -n "$wheelhouse" ]] && find_links+=(--find-links "$wheelhouse")

plan() {
    printf 'device_check plan (repository %s):\n' "$repo"
    printf '  1. GPU check: nvidia-smi -L must list a GPU; nvcc must be on PATH or in /usr/local/cuda/bin\n'
    printf '  2. fresh venv %s (%s -m venv --system-site-packages), then\n' "$venv" "$base_python"
    printf '     CMAKE_ARGS="%s" pip install --no-index %s --no-deps --no-build-isolation %s\n' \
        "$cmake_args" "${find_links[*]}" "$sdist"
    printf '     and check llama_cpp.llama_supports_gpu_offload()\n'
    printf '  3. llama-server: cmake -S %s/vendor/llama.cpp -B %s %s -DLLAMA_CURL=OFF; build --target llama-server\n' \
        "$src" "$server_build" "$cmake_args"
    printf '  4. stand-in: python benchmarks/standin_9b.py --out-dir %s\n' "$models"
    printf '  5. python -m atomicchat bench --target %s --draft %s --cases %s --gpu-layers -1\n' "$target" "$draft" "$cases"
    printf '     --server %s --repeats %s --prompts %s --max-tokens %s --json-out %s\n' \
        "$server" "$repeats" "$prompts" "$max_tokens" "$report"
    printf '     (atomicchat/cli/bench.py loads %s/benchmarks/bench.py; ATOMICCHAT_DEVICE_SAMPLING unset)\n' "$repo"
    printf '     (n_gpu_layers=-1 for the engine and Llama, -ngl/-ngld 999 for llama-server; one table;\n'
    printf '      on-device sampling is automatic with GPU layers, EngineConfig.device_sampling=None)\n'
    printf '  6. check %s: every engine case ran on the GPU with on-device sampling\n' "$report"
}

gpu_check() { # prints the GPU list, or dies with a sentence
    command -v nvidia-smi >/dev/null 2>&1 ||
        die 3 "no NVIDIA GPU is visible: nvidia-smi is not on PATH, so this machine cannot run the GPU check."
    local gpus
    gpus="$(nvidia-smi -L 2>&1)" || die 3 "no NVIDIA GPU is visible: 'nvidia-smi -L' failed: $gpus"
    [[ "$gpus" == *"GPU "* ]] || die 3 "no NVIDIA GPU is visible: 'nvidia-smi -L' listed none ($gpus)."
    printf '%s\n' "$gpus"
}

if ((dry_run)); then
    plan
    if command -v nvidia-smi >/dev/null 2>&1; then
        printf 'GPU check: nvidia-smi found; a real run lists the GPUs and goes on.\n'
    else
        printf 'GPU check: nvidia-smi is not on PATH; a real run would stop here (exit 3).\n'
    fi
    exit 0
fi

printf '== 1. GPU check\n'
gpu_check
nvcc_bin="$(command -v nvcc || true)"
[[ -z "$nvcc_bin" && -x /usr/local/cuda/bin/nvcc ]] && nvcc_bin=/usr/local/cuda/bin/nvcc
[[ -n "$nvcc_bin" ]] || die 3 "the CUDA toolkit is missing: nvcc is neither on PATH nor in /usr/local/cuda/bin."
export CUDACXX="$nvcc_bin"
export PATH="${nvcc_bin%/*}:$PATH"
[[ -e "$sdist" ]] || die 4 "the llama-cpp-python 0.3.36 sdist is not at $sdist (pass --sdist PATH)."
jobs="${jobs:-$(nproc)}"
export CMAKE_BUILD_PARALLEL_LEVEL="$jobs"

printf '== 2. fresh venv with CUDA llama-cpp-python (%s)\n' "$venv"
mkdir -p "$workdir"
rm -rf "$venv"
"$base_python" -m venv --system-site-packages "$venv"
py="$venv/bin/python"
if ! "$py" -c 'import scikit_build_core' 2>/dev/null; then
    "$py" -m pip install --no-index "${find_links[@]}" scikit-build-core cmake ninja ||
        die 4 "scikit-build-core is needed to build llama-cpp-python and is not installed or in --wheelhouse."
fi
CMAKE_ARGS="$cmake_args" FORCE_CMAKE=1 "$py" -m pip install --no-index "${find_links[@]}" \
    --no-deps --no-build-isolation --force-reinstall "$sdist"
"$py" - <<'EOF'
import sys
import llama_cpp
ok = bool(llama_cpp.llama_supports_gpu_offload())
print(f"llama-cpp-python {llama_cpp.__version__} from {llama_cpp.__file__}: GPU offload {'yes' if ok else 'NO'}")
sys.exit(0 if ok else 5)
EOF

printf '== 3. llama-server with CUDA (%s)\n' "$server_build"
if [[ -d "$sdist" ]]; then
    src="$sdist"
else
    rm -rf "$src"
    tar -xzf "$sdist" -C "$workdir"
fi
# shellcheck disable=SC2086  # cmake_args is a list of -D flags
cmake -S "$src/vendor/llama.cpp" -B "$server_build" -DCMAKE_BUILD_TYPE=Release $cmake_args \
    -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
cmake --build "$server_build" -j "$jobs" --target llama-server
[[ -x "$server" ]] || die 6 "llama-server was not built at $server."

printf '== 4. the Qwen3.5-9B stand-in (%s)\n' "$models"
cd "$repo"
PYTHONPATH="$repo" "$py" benchmarks/standin_9b.py --out-dir "$models" --threads "$jobs"

printf '== 5. atomicchat bench, cases %s, every layer on the GPU\n' "$cases"
rm -f "$report"
(
    unset ATOMICCHAT_DEVICE_SAMPLING
    PYTHONPATH="$repo" "$py" -m atomicchat bench --target "$target" --draft "$draft" --cases "$cases" \
        --gpu-layers -1 --server "$server" --repeats "$repeats" --prompts "$prompts" \
        --max-tokens "$max_tokens" --json-out "$report"
)

printf '== 6. on-device sampling on the GPU path\n'
PYTHONPATH="$repo" "$py" -m benchmarks.bench --check-gpu-report "$report" ||
    die 7 "the GPU path did not run on the GPU with on-device sampling (see above)."
