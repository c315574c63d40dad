#!/usr/bin/env bash
# A separate build environment per installer variant (Linux and macOS; Windows: packaging/README.md).
#
#   packaging/make_build_venv.sh cpu    [VENV]   # portable CPU build (default VENV: build/venv-cpu)
#   packaging/make_build_venv.sh cuda   [VENV]   # NVIDIA GPUs (Linux), needs the CUDA toolkit (nvcc)
#   packaging/make_build_venv.sh metal  [VENV]   # Apple GPUs (macOS arm64)
#   packaging/make_build_venv.sh vulkan [VENV]   # any Vulkan GPU, needs the Vulkan SDK (glslc)
#
# then e.g.  PYTHON=build/venv-cuda/bin/python packaging/linux/build_tarball.sh
#
# llama-cpp-python is compiled from source with CMAKE_ARGS for the variant. GGML_NATIVE=OFF matters:
# the default (ON) compiles for the build machine's CPU (AVX-512 here), and the installer then
# dies with SIGILL ("illegal instruction") on older CPUs. With it OFF, x86-64 builds target
# AVX2/FMA/F16C (Haswell, 2013+), which is what ggml enables by default when not native.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
variant="${1:-cpu}"
venv="${2:-$root/build/venv-$variant}"
case "$variant" in
  cpu)
    cmake="-DGGML_NATIVE=OFF"
    [ "$(uname -s)" = Darwin ] && cmake="$cmake -DGGML_METAL=OFF"
    ;;
  cuda)
    # One binary for Turing..Hopper (+ PTX for newer GPUs); bundles cudart/cublas (packaging/README.md).
    cmake="-DGGML_CUDA=on -DGGML_NATIVE=OFF -DCMAKE_CUDA_ARCHITECTURES=75-real;80-real;86-real;89-real;90"
    ;;
  metal)
    # Embedding the shader library avoids shipping ggml-metal.metal / default.metallib separately.
    cmake="-DGGML_METAL=on -DGGML_METAL_EMBED_LIBRARY=on -DGGML_NATIVE=OFF"
    ;;
  vulkan)
    cmake="-DGGML_VULKAN=on -DGGML_NATIVE=OFF"
    ;;
  *) echo "make_build_venv.sh: unknown variant $variant (cpu|cuda|metal|vulkan)" >&2; exit 2 ;;
esac
# As scripts/bootstrap.sh: no llamafile kernels, so the engine runs the CPU without flash attention
# and stays token-identical (atomicchat/engine/attention.py).
cmake="$cmake -DGGML_LLAMAFILE=OFF"
py="${PYTHON_FOR_VENV:-python3}"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip wheel
echo "Compiling llama-cpp-python 0.3.36 with CMAKE_ARGS=\"$cmake\" (several minutes) ..." >&2
CMAKE_ARGS="$cmake" FORCE_CMAKE=1 CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || sysctl -n hw.ncpu)}" \
  "$venv/bin/python" -m pip install --no-cache-dir --no-binary llama-cpp-python "llama-cpp-python==0.3.36"
"$venv/bin/python" -m pip install -q -e "$root[package]"
found="$("$venv/bin/python" "$here/bundle_config.py" variant)"
if [ "$found" != "$variant" ]; then
  echo "make_build_venv.sh: asked for $variant but llama_cpp/lib looks like $found" >&2
  exit 1
fi
echo "$venv"
