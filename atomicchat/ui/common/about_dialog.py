"""Help > About: the app's version, the llama.cpp it runs on (version, commit, backends) and the licence."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from atomicchat import APP_NAME, __version__
from atomicchat.engine.build_info import BuildInfo, build_info

LICENCE = "MIT"


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None, info: BuildInfo | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"About {APP_NAME}")
        self.info = info or build_info()
        col = QVBoxLayout(self)
        i = self.info
        self.text = QLabel(
            f"<h3>{APP_NAME} {__version__}</h3>"
            "<p>A private, offline chat for local models, with DFlash speculative decoding.</p>"
            f"<p>llama.cpp (ggml {html.escape(i.ggml_version)}, commit {html.escape(i.ggml_commit)}) through "
            f"llama-cpp-python {html.escape(i.llama_cpp_python)}<br>"
            f"<small>{html.escape(i.system_info)}</small></p>"
            f"<p>Licence: {LICENCE}. llama.cpp and llama-cpp-python are MIT licensed; Qt for Python (PySide6) is LGPLv3.</p>"
        )
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        col.addWidget(self.text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        col.addWidget(buttons)
        self.setMinimumWidth(460)
