"""Same as `atomicchat bench ...`: our engine vs llama.cpp's C++ DFlash server, side by side.

    .venv/bin/python benchmarks/server_bench.py --json-out out/bench.json
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from atomicchat.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
