"""Pieces every feature uses: the theme, the notice bar, the flow layout, small dialogs, and
`async_tasks` (the one pattern for blocking work off the UI thread)."""
