"""PyInstaller entry point of the installed app: `AtomicChat` starts the window, `AtomicChat <command>`
(e.g. `--self-test`, `generate ...`) runs a headless command. Same dispatch as `python -m atomicchat`."""

from __future__ import annotations

import multiprocessing
import os
import sys


def _prepare_frozen() -> None:
    bundle = getattr(sys, "_MEIPASS", None)
    if not bundle:
        return
    # llama_cpp loads lib/ next to its own module, which PyInstaller puts at <bundle>/llama_cpp/lib.
    # On Windows, ggml*.dll are found next to llama.dll only when that folder is on the DLL search
    # path; llama_cpp adds it itself, this keeps it true for any other ctypes user as well.
    lib = os.path.join(bundle, "llama_cpp", "lib")
    if sys.platform == "win32" and os.path.isdir(lib):
        os.add_dll_directory(lib)
        os.environ["PATH"] = lib + os.pathsep + os.environ.get("PATH", "")
    # A user's own LLAMA_CPP_LIB_PATH (from a source install) must not redirect the bundled app to
    # a different, possibly incompatible libllama.
    os.environ.pop("LLAMA_CPP_LIB_PATH", None)


def main() -> int:
    multiprocessing.freeze_support()
    _prepare_frozen()
    from atomicchat.__main__ import main as app_main

    return app_main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
