"""The Textual app (imports Textual; the core never imports this package)."""
