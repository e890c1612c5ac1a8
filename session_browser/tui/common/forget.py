"""What the "Forget this session…" confirmation says: every place and what goes from it, as
the core's plan names them (untrusted ids and paths rendered literally)."""

from __future__ import annotations

from rich.text import Text

from session_browser.core.forget.plan import Plan
from session_browser.tui.common.render import printable


def forget_body(plan: Plan) -> Text:
    body = Text(end="")
    body.append("These copies will be erased, for good (no undo):\n", style="bold")
    for line in plan.lines():
        body.append(f"• {printable(line, one_line=True)}\n")
    body.append(
        "\nThe session stays denied: the next index update, vault keep and push leave it "
        "out (session-browser forget --list / --undo-deny).\nThe agent's own file is left "
        "alone; exports you wrote elsewhere are not ours to erase.",
        style="dim",
    )
    return body
