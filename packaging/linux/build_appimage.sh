#!/usr/bin/env bash
# AppImage recipe -- UNTESTED as a whole: appimagetool is not available offline on the CI machine,
# so CI ships and tests the tarball (build_tarball.sh). The AppDir assembly below is plain file
# copying; the last step needs appimagetool (https://github.com/AppImage/appimagetool) on PATH or
# in $APPIMAGETOOL.
#
#   packaging/linux/build_appimage.sh [--bundle DIR] [--out DIR]
#
# Output: AtomicChat-<version>-linux-<arch>-<variant>.AppImage (or, without appimagetool, the
# AppDir folder and exit code 3).
set -euo pipefail
script=build_appimage.sh
help_lines=2,11p
# shellcheck source=packaging/linux/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
variant="$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["variant"])' "$bundle/_internal/atomicchat_build.json" 2>/dev/null || echo cpu)"
stem="$("$py" "$root/packaging/bundle_config.py" stem "$variant")"

mkdir -p "$out"
out="$(cd "$out" && pwd)"
appdir="$out/$stem.AppDir"
rm -rf "$appdir"
mkdir -p "$appdir/usr/lib" "$appdir/usr/share/applications"
cp -a "$bundle" "$appdir/usr/lib/atomicchat"
cat > "$appdir/AppRun" <<'RUN'
#!/bin/sh
# AppImage entry: run the bundled app with the user's arguments (e.g. --self-test).
here="$(dirname "$(readlink -f "$0")")"
exec "$here/usr/lib/atomicchat/AtomicChat" "$@"
RUN
chmod 755 "$appdir/AppRun"
sed -e 's/^Exec=.*/Exec=AtomicChat/' -e '/^TryExec=/d' "$here/atomicchat.desktop" > "$appdir/atomicchat.desktop"
cp "$appdir/atomicchat.desktop" "$appdir/usr/share/applications/atomicchat.desktop"
for png in "$root"/resources/icons/atomicchat-*.png; do
  size="$(basename "$png" .png)"; size="${size#atomicchat-}"
  mkdir -p "$appdir/usr/share/icons/hicolor/${size}x${size}/apps"
  cp "$png" "$appdir/usr/share/icons/hicolor/${size}x${size}/apps/atomicchat.png"
done
cp "$root/resources/icons/atomicchat-256.png" "$appdir/atomicchat.png"
ln -sfn atomicchat.png "$appdir/.DirIcon"

tool="${APPIMAGETOOL:-$(command -v appimagetool || true)}"
if [ -z "$tool" ]; then
  echo "build_appimage.sh: appimagetool not found; AppDir is ready at $appdir" >&2
  echo "$appdir"
  exit 3
fi
ARCH="$(uname -m)" "$tool" --no-appstream "$appdir" "$out/$stem.AppImage" >&2
rm -rf "$appdir"
echo "$out/$stem.AppImage"
