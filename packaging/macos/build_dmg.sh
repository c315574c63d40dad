#!/usr/bin/env bash
# macOS download: AtomicChat.app (PyInstaller BUNDLE step of packaging/atomicchat.spec) inside a
# drag-to-Applications disk image. UNTESTED on CI (no Mac there); run it on a Mac:
#
#   packaging/macos/build_dmg.sh                       # unsigned .dmg (Gatekeeper: right-click > Open)
#   ATOMICCHAT_CODESIGN_IDENTITY="Developer ID Application: NAME (TEAMID)" \
#   ATOMICCHAT_NOTARY_PROFILE=atomicchat-notary packaging/macos/build_dmg.sh   # signed + notarized
#
# The notary profile is created once with
#   xcrun notarytool store-credentials atomicchat-notary --apple-id ... --team-id ... --password ...
# Build on the oldest macOS you support (LSMinimumSystemVersion is 12.0) and on the architecture you
# ship: arm64 with the Metal variant, x86_64 with the CPU variant (see packaging/README.md).
# Output: dist/AtomicChat-<version>-macos-<arch>-<variant>.dmg (path printed last).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="${PYTHON:-}"
if [ -z "$py" ]; then
  if [ -x "$root/.venv/bin/python" ]; then py="$root/.venv/bin/python"; else py=python3; fi
fi
[ "$(uname -s)" = Darwin ] || { echo "build_dmg.sh: run this on macOS (needs hdiutil, codesign)" >&2; exit 1; }
identity="${ATOMICCHAT_CODESIGN_IDENTITY:-}"
profile="${ATOMICCHAT_NOTARY_PROFILE:-}"
out="$root/dist"

# 1. Bundle (the spec signs every binary with $ATOMICCHAT_CODESIGN_IDENTITY when it is set).
export ATOMICCHAT_CODESIGN_IDENTITY="$identity"
"$py" "$root/packaging/build_bundle.py" --dist "$out" --work "$root/build/pyinstaller" >/dev/null
app="$out/AtomicChat.app"
[ -d "$app" ] || { echo "build_dmg.sh: PyInstaller did not produce $app" >&2; exit 1; }

# 2. Self-test from inside the .app (Metal variant: reports the GPU device).
"$app/Contents/MacOS/AtomicChat" --self-test

# 3. Sign the app itself with the hardened runtime (notarization requires it).
if [ -n "$identity" ]; then
  codesign --force --options runtime --timestamp --entitlements "$here/entitlements.plist" \
    --sign "$identity" "$app"
  codesign --verify --deep --strict --verbose=2 "$app"
fi

# 4. Disk image: the app plus a link to /Applications.
variant="$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["variant"])' "$out/AtomicChat/_internal/atomicchat_build.json" 2>/dev/null || echo cpu)"
stem="$("$py" "$root/packaging/bundle_config.py" stem "$variant")"
version="$("$py" "$root/packaging/bundle_config.py" version)"
stage="$(mktemp -d "${TMPDIR:-/tmp}/atomicchat-dmg.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
ditto "$app" "$stage/Atomic Chat.app"
ln -s /Applications "$stage/Applications"
dmg="$out/$stem.dmg"
rm -f "$dmg"
hdiutil create -volname "Atomic Chat $version" -srcfolder "$stage" -fs HFS+ -format UDZO -ov "$dmg" >/dev/null

# 5. Sign, notarize and staple the image (the ticket then also covers the app inside).
if [ -n "$identity" ]; then
  codesign --force --timestamp --sign "$identity" "$dmg"
  if [ -n "$profile" ]; then
    xcrun notarytool submit "$dmg" --keychain-profile "$profile" --wait
    xcrun stapler staple "$dmg"
    spctl --assess --type open --context context:primary-signature --verbose=2 "$dmg" || true
  fi
fi
echo "$dmg"
