# Shared by build_tarball.sh and build_appimage.sh (sourced, not run): the Python to use, the
# --bundle/--out/--help options, and the onedir bundle (built by packaging/build_bundle.py when
# --bundle is not given). The caller sets `script` (its name) and `help_lines` (its usage comment)
# and has `set -euo pipefail`. Leaves: here, root, py, bundle (absolute), out.
here="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="${PYTHON:-}"
if [ -z "$py" ]; then
  if [ -x "$root/.venv/bin/python" ]; then py="$root/.venv/bin/python"; else py=python3; fi
fi
bundle=""
out="$root/dist"
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) bundle="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n "$help_lines" "$here/$script" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "$script: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "$bundle" ]; then
  bundle="$("$py" "$root/packaging/build_bundle.py" --dist "$root/dist" | tail -n 1)"
fi
bundle="$(cd "$bundle" && pwd)"
