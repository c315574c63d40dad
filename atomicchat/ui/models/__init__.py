"""The model manager window: catalog cards, installed rows and the Hub search, on top of the
Qt-free atomicchat.models.service."""
