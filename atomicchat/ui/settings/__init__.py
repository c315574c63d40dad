"""The settings dialog."""
