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
spec="$here"
[ -n "$extras" ] && spec="$here[$extras]"
stamp="$venv/.atomicchat-installed-$extras"
if [ ! -f "$stamp" ] || [ "$here/pyproject.toml" -nt "$stamp" ]; then
  echo "Installing Atomic Chat${extras:+ with [$extras]} (first time only; llama.cpp may compile for a few minutes) ..." >&2
  "$venv/bin/python" -m pip install -q -e "$spec" >&2
  touch "$stamp"
fi
