#!/usr/bin/env bash
# What a GPU lease would carry of this checkout, and how to make it fit.
#
# A GPU machine lent to a session gets a copy of the checkout: the files git tracks (its index) and
# the untracked files it does not ignore, at most 64 MiB in all. This checkout tracks ~86 MiB, ~43 of
# them the SmolLM2 draft the app ships (resources/smollm2/), which benchmarks/device_check.sh never
# reads (it generates its own stand-in), so a device run is refused until that file stays behind.
#   size [CARRY...] prints what would travel (MiB, the largest files) against the limit, with the
#                   ignored files or folders CARRY that the call would name in its carry list
#   slim [PATH...]  takes PATHs (default: the GGUFs under resources/smollm2/) out of the index and
#                   ignores them in .git/info/exclude: they stay on disk, untouched, and do not travel.
#                   Refused while any of them has changes, or while a slim is in effect.
#   restore         puts them back into the index as HEAD has them and drops the exclude lines;
#                   afterwards `git status` shows them as before the slim.
# Between slim and restore the index records their deletion: COMMIT NOTHING then (restore first).
#
# usage: benchmarks/device_tree.sh size [CARRY...]|slim [PATH...]|restore
set -euo pipefail

limit_mib=64
begin="# device_tree.sh slim: begin (benchmarks/device_tree.sh restore undoes it)"
end="# device_tree.sh slim: end"

die() {
    printf 'device_tree: %s\n' "$1" >&2
    exit "${2:-1}"
}

root="$(git rev-parse --show-toplevel 2>/dev/null)" || die "not inside a git checkout." 2
cd "$root"
exclude="$(git rev-parse --git-path info/exclude)"

slimmed() { # prints the paths of the slim in effect, one a line (nothing: none)
    [[ -f "$exclude" ]] || return 0
    awk -v b="$begin" -v e="$end" '$0 == b {on = 1; next} $0 == e {on = 0} on && /^\// {print substr($0, 2)}' "$exclude"
}

size() {
    local total c
    for c in "$@"; do
        [[ -e "$c" ]] || die "$c (to carry) does not exist."
    done
    total="$( { git ls-files -z --cached; git ls-files -z --others --exclude-standard
        for c in "$@"; do find "$c" -type f -print0; done; } |
        xargs -0 -r stat -c '%s %n' 2>/dev/null | sort -rn | awk -v lim="$limit_mib" '
        { s += $1; if (NR <= 5) top[NR] = sprintf("  %8.1f MiB  %s", $1 / 1048576, substr($0, index($0, " ") + 1)) }
        END { for (i = 1; i <= 5 && i in top; i++) print top[i] > "/dev/stderr"; printf "%.1f", s / 1048576 }')"
    printf 'would travel: %s MiB (limit %s MiB)\n' "$total" "$limit_mib"
    awk -v t="$total" -v l="$limit_mib" 'BEGIN { exit !(t <= l) }' ||
        printf 'over the limit: benchmarks/device_tree.sh slim leaves the shipped SmolLM2 draft behind\n'
}

slim() {
    [[ -z "$(slimmed)" ]] || die "a slim is already in effect ($(slimmed | tr '\n' ' ')): run restore first."
    local paths=("$@")
    if ((${#paths[@]} == 0)); then
        mapfile -t paths < <(git ls-files -- 'resources/smollm2/*.gguf')
    fi
    ((${#paths[@]} > 0)) || die "nothing to leave behind: no such tracked file."
    local p
    for p in "${paths[@]}"; do
        [[ -n "$(git ls-files -- "$p")" ]] || die "$p is not a tracked file."
        [[ -z "$(git status --porcelain -- "$p")" ]] || die "$p has changes: commit or undo them before a slim."
    done
    git rm -q --cached -- "${paths[@]}"
    mkdir -p "$(dirname "$exclude")"
    { printf '%s\n' "$begin"; printf '/%s\n' "${paths[@]}"; printf '%s\n' "$end"; } >>"$exclude"
    printf 'left behind (on disk, out of the index, ignored): %s\n' "${paths[*]}"
    size
    printf 'commit nothing until: benchmarks/device_tree.sh restore\n'
}

restore() {
    local paths
    mapfile -t paths < <(slimmed)
    ((${#paths[@]} > 0)) || { printf 'no slim in effect: nothing to restore\n'; return 0; }
    git reset -q -- "${paths[@]}"
    local tmp="$exclude.device_tree.$$"
    awk -v b="$begin" -v e="$end" '$0 == b {on = 1; next} $0 == e {on = 0; next} !on' "$exclude" >"$tmp"
    mv "$tmp" "$exclude"
    local left
    left="$(git status --porcelain -- "${paths[@]}")"
    [[ -z "$left" ]] || die "restored, but git still reports: $left"
    printf 'restored: %s\n' "${paths[*]}"
}

case "${1:-}" in
size) shift; size "$@" ;;
slim) shift; slim "$@" ;;
restore) restore ;;
-h | --help) sed -n 's/^# usage: //p' "${BASH_SOURCE[0]}" ;;
*) die "say size, slim [PATH...] or restore (see --help)." 2 ;;
esac
