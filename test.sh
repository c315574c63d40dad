#!/usr/bin/env bash
# Install (first run only) and run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# [package] brings PyInstaller: tests/packaging builds the installed app and self-tests it
# (about 2-3 minutes; ATOMICCHAT_SKIP_BUNDLE=1 skips that for quick local runs).
bash "$here/scripts/bootstrap.sh" "test,package"
cd "$here"
export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
# pytest's own exit code is kept: 5 (no tests collected) fails like any other failure.
exec "$here/.venv/bin/python" -m pytest "$@"
