"""The local OpenAI-compatible server inside the app: its controller and its settings group."""
