"""Shell scripts never end a pipeline early under `set -o pipefail`.

`cmd | head -n 1` (or `grep -q`, `sed q`) closes the pipe while `cmd` still writes; `cmd` then dies
of SIGPIPE and pipefail turns that into exit 141, at random (it failed 164 of 300 bare runs of
`ldd --version | head -n 1` on the CI machine). Read to the end instead (`sed -n '1p'`, `awk 'NR==1'`).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EARLY_EXIT = re.compile(r"\|\s*(head\b|grep\s+(-\w*q|--quiet)|sed\s+(-n\s+)?['\"]?\d*q)")


def _scripts() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    found = []
    for name in out:
        p = ROOT / name
        if p.suffix == ".sh" or name in ("run.sh", "test.sh", ".ci/run"):
            found.append(p)
        elif p.is_file() and not p.suffix and p.read_bytes()[:2] == b"#!" and b"bash" in p.read_bytes()[:40]:
            found.append(p)
    return found


def test_no_pipeline_ends_early_under_pipefail() -> None:
    scripts = _scripts()
    assert len(scripts) >= 5  # run.sh, test.sh, .ci/run, bootstrap, packaging scripts
    bad = []
    for p in scripts:
        text = p.read_text(encoding="utf-8", errors="replace")
        if "pipefail" not in text:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
            if EARLY_EXIT.search(code):
                bad.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not bad, "pipelines that can die of SIGPIPE under pipefail:\n" + "\n".join(bad)


def test_the_lint_catches_the_pattern() -> None:
    assert EARLY_EXIT.search('glibc="$(ldd --version | head -n 1)"')
    assert EARLY_EXIT.search("x | grep -q foo") and EARLY_EXIT.search("x | sed 1q")
    assert not EARLY_EXIT.search("ldd --version | sed -n '1s/.* //p'")
