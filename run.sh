#!/usr/bin/env bash
# Install (first run only) and start Atomic Chat. Extra arguments go to the app, e.g. `./run.sh generate --help`.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/scripts/bootstrap.sh" ""
exec "$here/.venv/bin/atomicchat" "$@"
