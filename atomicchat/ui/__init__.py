"""The desktop app (PySide6), grouped by feature: `chat/` (the open conversation, its messages and
the sidebar), `models/` (the model manager), `server/` (the local API), `settings/`, `engine/` (the
engine thread and its messages) and `common/` (theme, notices, layouts, background work). `app` starts
it; `main_window` puts the pieces together.
"""
