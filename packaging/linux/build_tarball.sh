#!/usr/bin/env bash
# Linux end-user download: AtomicChat-<version>-linux-<arch>-<variant>.tar.gz
#
#   packaging/linux/build_tarball.sh                    # PyInstaller build into dist/, then the tarball
#   packaging/linux/build_tarball.sh --bundle DIR       # package an existing onedir bundle (CI, tests)
#   packaging/linux/build_tarball.sh --out DIR          # where the .tar.gz goes (default dist/)
#   PYTHON=/path/to/venv/bin/python packaging/linux/build_tarball.sh   # e.g. a CUDA build venv
#
# Tarball layout (one top folder, named like the file):
#   AtomicChat/            the onedir app; ./AtomicChat/AtomicChat runs it in place
#   install.sh             per-user (default) or --system install, menu entry, icons; --uninstall
#   atomicchat.desktop     menu entry template (install.sh writes the absolute Exec path)
#   icons/hicolor/...      PNG 16..512 + scalable SVG, freedesktop icon-theme layout
#   README.txt
# Prints the tarball path as the last line of stdout.
set -euo pipefail
script=build_tarball.sh
help_lines=2,17p
# shellcheck source=packaging/linux/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ -x "$bundle/AtomicChat" ] && [ -d "$bundle/_internal" ] || { echo "build_tarball.sh: $bundle is not an AtomicChat onedir bundle" >&2; exit 1; }

info="$bundle/_internal/atomicchat_build.json"
variant="$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["variant"])' "$info" 2>/dev/null || echo cpu)"
stem="$("$py" "$root/packaging/bundle_config.py" stem "$variant")"
version="$("$py" "$root/packaging/bundle_config.py" version)"

stage="$(mktemp -d "${TMPDIR:-/tmp}/atomicchat-tarball.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
top="$stage/$stem"
mkdir -p "$top"
cp -a "$bundle" "$top/AtomicChat"
install -m 755 "$here/install.sh" "$top/install.sh"
install -m 644 "$here/atomicchat.desktop" "$top/atomicchat.desktop"
for png in "$root"/resources/icons/atomicchat-*.png; do
  size="$(basename "$png" .png)"; size="${size#atomicchat-}"
  mkdir -p "$top/icons/hicolor/${size}x${size}/apps"
  install -m 644 "$png" "$top/icons/hicolor/${size}x${size}/apps/atomicchat.png"
done
mkdir -p "$top/icons/hicolor/scalable/apps"
install -m 644 "$root/resources/icons/atomicchat.svg" "$top/icons/hicolor/scalable/apps/atomicchat.svg"
glibc="$(ldd --version 2>/dev/null | sed -n '1s/.* //p')"  # sed reads to the end: no SIGPIPE under pipefail
cat > "$top/README.txt" <<TXT
Atomic Chat $version for Linux ($(uname -m), $variant build)

Run it in place:      ./AtomicChat/AtomicChat
Install for yourself: ./install.sh          (menu entry + ~/.local/bin/atomicchat)
Install for everyone: sudo ./install.sh --system
Uninstall:            ./install.sh --uninstall   (add --system if installed that way)
Check the install:    atomicchat --self-test

Needs glibc $glibc or newer (the build machine's) and a desktop with X11 (libxcb-cursor0,
libxkbcommon-x11-0 and the usual libxcb-* packages) or Wayland. Your chats and models live in
~/.local/share/atomicchat and ~/.cache/atomicchat and survive an uninstall.
TXT

mkdir -p "$out"
out="$(cd "$out" && pwd)"
tarball="$out/$stem.tar.gz"
# Fixed owner and sorted names: the same bundle gives the same member list on every machine.
tar -C "$stage" --owner=0 --group=0 --numeric-owner --sort=name -cf - "$stem" | gzip -6 > "$tarball.partial"
mv "$tarball.partial" "$tarball"
echo "$(du -h "$tarball" | cut -f1) $tarball" >&2
echo "$tarball"
