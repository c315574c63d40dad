"""The engine side of the window: `worker` (the engine thread), `host` (its UI-thread handle) and
`worker_types` (the immutable messages between them)."""
