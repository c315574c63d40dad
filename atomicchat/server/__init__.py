"""A local OpenAI-compatible HTTP server on the same engine the app uses (`atomicchat serve`).

Qt-free. `protocol` parses and validates requests and shapes responses and errors as the OpenAI API
does; `backend` runs jobs one at a time, in order, on the thread that owns the engine; `app` is the
Starlette application. The `serve` command is atomicchat.cli.serve.
"""
