"""``session-browser mcp``: recall over the Model Context Protocol (the ``mcp`` extra)."""
