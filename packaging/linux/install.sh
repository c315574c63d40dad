#!/bin/sh
# Atomic Chat for Linux: install, or uninstall, from the unpacked tarball.
#
#   ./install.sh               for the current user: ~/.local/opt/atomicchat, menu entry, icon,
#                              ~/.local/bin/atomicchat
#   sudo ./install.sh --system for everyone: /opt/atomicchat, /usr/local/share/applications, ...
#   ./install.sh --uninstall [--system]
#
# Nothing else is needed: the app carries its own Python, Qt and llama.cpp. Your chats and models
# (~/.local/share/atomicchat, ~/.cache/atomicchat) are never touched by --uninstall.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
mode=user
action=install
for arg in "$@"; do
  case "$arg" in
    --system) mode=system ;;
    --uninstall) action=uninstall ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option $arg (try --help)" >&2; exit 2 ;;
  esac
done

if [ "$mode" = system ]; then
  app_dir=/opt/atomicchat
  bin_dir=/usr/local/bin
  share=/usr/local/share
else
  app_dir="$HOME/.local/opt/atomicchat"
  bin_dir="$HOME/.local/bin"
  share="${XDG_DATA_HOME:-$HOME/.local/share}"
fi
apps="$share/applications"
icons="$share/icons/hicolor"

refresh() {
  command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$apps" 2>/dev/null || true
  command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$icons" 2>/dev/null || true
}

if [ "$action" = uninstall ]; then
  rm -f "$apps/atomicchat.desktop"
  for f in "$icons"/*/apps/atomicchat.png "$icons"/scalable/apps/atomicchat.svg; do
    [ -e "$f" ] && rm -f "$f"
  done
  if [ -L "$bin_dir/atomicchat" ]; then rm -f "$bin_dir/atomicchat"; fi
  # Only ever delete a folder that is an Atomic Chat install.
  if [ -x "$app_dir/AtomicChat" ] && [ -d "$app_dir/_internal" ]; then rm -rf "$app_dir"; fi
  refresh
  echo "Atomic Chat removed. Your chats and models were kept."
  exit 0
fi

[ -x "$here/AtomicChat/AtomicChat" ] || { echo "install.sh: run me from the unpacked Atomic Chat folder" >&2; exit 1; }
if [ -e "$app_dir" ] && ! { [ -x "$app_dir/AtomicChat" ] && [ -d "$app_dir/_internal" ]; }; then
  echo "install.sh: $app_dir exists and is not an Atomic Chat install; not touching it" >&2
  exit 1
fi
mkdir -p "$(dirname "$app_dir")" "$bin_dir" "$apps"
rm -rf "$app_dir.new"
cp -a "$here/AtomicChat" "$app_dir.new"
rm -rf "$app_dir"
mv "$app_dir.new" "$app_dir"
ln -sfn "$app_dir/AtomicChat" "$bin_dir/atomicchat"

for png in "$here"/icons/hicolor/*/apps/atomicchat.png "$here"/icons/hicolor/scalable/apps/atomicchat.svg; do
  [ -e "$png" ] || continue
  rel=${png#"$here/icons/hicolor/"}
  mkdir -p "$icons/$(dirname "$rel")"
  cp "$png" "$icons/$rel"
done

# The menu entry runs the installed binary by absolute path (works without ~/.local/bin on PATH).
# Desktop-entry quoting: inside "..." escape \ " ` $ with a backslash; a literal % is %%.
exec_path=$(printf '%s' "$app_dir/AtomicChat" | sed -e 's/[\\"`$]/\\&/g' -e 's/%/%%/g')
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in
    Exec=*) printf 'Exec="%s"\n' "$exec_path" ;;
    TryExec=*) printf 'TryExec=%s\n' "$app_dir/AtomicChat" ;;
    *) printf '%s\n' "$line" ;;
  esac
done < "$here/atomicchat.desktop" > "$apps/atomicchat.desktop"
chmod 644 "$apps/atomicchat.desktop"
refresh

echo "Atomic Chat installed in $app_dir"
echo "Start it from your applications menu, or run: $bin_dir/atomicchat"
case ":$PATH:" in *":$bin_dir:"*) ;; *) echo "(note: $bin_dir is not on your PATH)";; esac
