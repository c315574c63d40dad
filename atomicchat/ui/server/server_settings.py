"""Settings ▸ Local server: off by default; this computer only unless the user allows others."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QCheckBox, QFormLayout, QGroupBox, QLabel, QLineEdit, QSpinBox, QWidget

from atomicchat.store.settings import AppSettings


class ServerSettingsGroup(QGroupBox):
    def __init__(self, settings: AppSettings, parent: QWidget | None = None) -> None:
        super().__init__("Local server (OpenAI-compatible API)", parent)
        form = QFormLayout(self)
        self.enabled = QCheckBox("Serve the loaded model at http://127.0.0.1:PORT/v1")
        self.enabled.setChecked(settings.api_enabled)
        form.addRow("Server", self.enabled)
        self.port = QSpinBox()
        self.port.setRange(1024, 65535)
        self.port.setValue(settings.api_port)
        form.addRow("Port", self.port)
        self.others = QCheckBox("Allow other computers on the network (binds 0.0.0.0)")
        self.others.setChecked(settings.api_host not in ("127.0.0.1", "::1", "localhost"))
        form.addRow("Access", self.others)
        self.key = QLineEdit(settings.api_key)
        self.key.setPlaceholderText("none: any local program may use it")
        self.key.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
        form.addRow("API key", self.key)
        self.cors = QCheckBox("Allow web pages in a browser to use it (CORS)")
        self.cors.setChecked(settings.api_cors)
        form.addRow("Web pages", self.cors)
        self.hint = QLabel()
        self.hint.setObjectName("hint")
        self.hint.setWordWrap(True)
        form.addRow("", self.hint)
        for w in (self.enabled, self.others, self.cors):
            w.toggled.connect(self._sync)
        self.key.textChanged.connect(self._sync)
        self.port.valueChanged.connect(self._sync)
        self._sync()

    def _sync(self) -> None:
        on = self.enabled.isChecked()
        for w in (self.port, self.others, self.key, self.cors):
            w.setEnabled(on)
        self.enabled.setText(f"Serve the loaded model at http://127.0.0.1:{self.port.value()}/v1")
        if on and self.others.isChecked() and not self.key.text().strip():
            self.hint.setText("Anyone on your network can use the model: set an API key.")
        elif on and self.cors.isChecked() and not self.key.text().strip():
            self.hint.setText("Any web page you open could use the model: set an API key, and give it only to "
                              "the web app you trust.")
        else:
            self.hint.setText("One request at a time: API requests and chat replies wait their turn.")

    def apply_to(self, settings: AppSettings) -> AppSettings:
        return replace(
            settings,
            api_enabled=self.enabled.isChecked(),
            api_port=self.port.value(),
            api_host="0.0.0.0" if self.others.isChecked() else "127.0.0.1",
            api_key=self.key.text().strip(),
            api_cors=self.cors.isChecked(),
        )
