"""The Qt Widgets desktop app. Only this package imports Qt; it reaches the engine through `worker`."""
