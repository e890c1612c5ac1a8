"""The shape of the code, checked on its source: one indexed store class serves every source
(no class of the app or the library inherits it), and one relevance procedure serves both
engines (neither engine's package holds a copy of its steps)."""

from __future__ import annotations

import ast
from pathlib import Path

import session_browser

PACKAGE = Path(session_browser.__file__).parent


def _classes() -> list[tuple[str, str, list[str]]]:
    """(file, class, the names of its bases) of every class in the package."""
    out: list[tuple[str, str, list[str]]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
                out.append((str(path.relative_to(PACKAGE)), node.name, bases))
    return out


def test_no_class_inherits_the_indexed_store() -> None:
    classes = _classes()
    assert any(name == "SqliteSessionStore" for _f, name, _b in classes)
    heirs = [(f, name) for f, name, bases in classes if "SqliteSessionStore" in bases]
    assert heirs == []


def _functions(package: str) -> dict[str, str]:
    """Every function and method of ``package`` (a folder of the core), by name: its file."""
    out: dict[str, str] = {}
    for path in sorted((PACKAGE / "core" / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                out[node.name] = str(path.relative_to(PACKAGE))
    return out


def test_the_relevance_procedure_lives_in_search_only() -> None:
    steps = {"relevance", "find", "score", "hits", "fold_key"}
    assert steps <= set(_functions("search"))
    for engine in ("index", "pgindex"):
        names = _functions(engine)
        # what the engines' copies were called; none calls order() or refine() itself
        copies = {"_relevance_locked", "_relevance_snapshot", "_score_index", "_to_candidates"}
        assert not copies & set(names), engine
        for path in (PACKAGE / "core" / engine).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            called = {
                n.func.id
                for n in ast.walk(tree)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            }
            assert not called & {"order", "refine", "score_rows", "corrected"}, path.name
