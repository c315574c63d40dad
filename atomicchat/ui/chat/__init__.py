"""The open chat: the session that sends and saves, the view, each message with its markdown and
DFlash stats, the composer and the list of chats."""
