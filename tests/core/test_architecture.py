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
    # nor do the tests: a test that needs another behaviour patches a method by name
    tests = Path(__file__).resolve().parents[1]
    for path in sorted(tests.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
                assert "SqliteSessionStore" not in bases, (path.name, node.name)


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


def test_the_reconcile_is_held_not_inherited(tmp_path: Path) -> None:
    """The store holds a Reconciler; no class of the reconcile is in the store's bases, and
    the reconcile's steps are the Reconciler's, not the store's."""
    from session_browser.core.index import SqliteSessionStore
    from session_browser.core.index.reconcile import Reconciler

    inherited = [c.__name__ for c in SqliteSessionStore.__mro__ if "reconcile" in c.__module__]
    assert inherited == []
    steps = {"_survey", "_apply", "_parsed_batches", "_insert_batch", "_delete_file"}
    assert steps <= set(vars(Reconciler))
    assert not steps & set(dir(SqliteSessionStore))
    with SqliteSessionStore(tmp_path / "s", db_path=tmp_path / "i.sqlite3") as store:
        assert isinstance(store.reconciler, Reconciler) and store.reconciler.index is store


# --------------------------------------------------------------------------- import cycles

CORE = PACKAGE / "core"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(CORE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _core_imports() -> dict[str, set[str]]:
    """Every core module (``index.store``, ``store``, ...) and the core modules it imports,
    wherever the import is (module level or inside a function), with the packages whose
    ``__init__`` such an import runs; imports for type checkers only (under
    ``if TYPE_CHECKING:``) are not imports at run time and are left out."""
    paths = {_module_name(p): p for p in CORE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        typing_only = {
            id(sub)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for sub in ast.walk(node)
        }
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        deps: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
                targets = [t.removeprefix("session_browser.core.") for t in targets]
            elif isinstance(node, ast.ImportFrom):
                if node.level == 0:
                    module = node.module or ""
                    if not module.startswith("session_browser.core"):
                        continue
                    base = module.removeprefix("session_browser.core").lstrip(".")
                else:
                    up = package[: len(package) - (node.level - 1)]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                for alias in node.names:
                    full = f"{base}.{alias.name}" if base else alias.name
                    targets.append(full if full in paths else base)
            deps.update(t for t in targets if t in paths and t != name)
        # importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first (but a module
        # of ``a`` is imported by ``a``'s own __init__, which is already running)
        for target in list(deps):
            parts = target.split(".")
            for i in range(1, len(parts)):
                parent = ".".join(parts[:i])
                if parent in paths and parent != name and not name.startswith(parent + "."):
                    deps.add(parent)
        graph[name] = deps
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp.add(member)
                    if member == node:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def test_the_cycle_finder_sees_an_import_inside_a_function() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [{"a", "b", "c"}]
    imports = _core_imports()
    assert "index" in imports["actions.rescue"]  # imported inside writer_of only
    # ``from ..payload import X`` in a module of ``portable``; ``from ..quarantine.items``
    # would run quarantine/__init__ too
    assert "payload" in imports["portable.importing"]
    assert {"vault", "vault.reading"} <= imports["portable.exporting"]


def test_no_import_cycle_among_core_modules() -> None:
    """Not one, counting imports inside functions: the JSON store and its praisonaiagents
    API (``compat``) sit under the workbench, ``portable`` and the index; one store's
    portable payload (``payload``) sits under the store."""
    assert _cycles(_core_imports()) == []
    imports = _core_imports()
    for low in ("store", "compat", "payload"):
        above = {"portable", "quarantine", "index", "actions", "vault", "multi", "open"}
        assert not {m.split(".")[0] for m in imports[low]} & above, low


def test_every_source_kind_opens_the_one_indexed_store(tmp_path: Path) -> None:
    """No kind brings an index store of its own (not even one made at run time)."""
    from session_browser.core.index import SqliteSessionStore
    from session_browser.core.open import index_store
    from session_browser.core.sources import SOURCES

    assert len(SOURCES) >= 6
    for kind in SOURCES.values():
        root = tmp_path / kind.name
        root.mkdir()
        store = index_store(kind, root, "none", db_path=tmp_path / f"{kind.name}.sqlite3")
        try:
            assert type(store) is SqliteSessionStore, kind.name
        finally:
            store.close()


# --------------------------------------------------------------------------- plain imports


def test_the_app_imports_its_screens_plainly() -> None:
    """No screen is looked up by module name at run time (``importlib``, ``find_spec``):
    a screen the app opens is an import a reader and the type checker can follow."""
    probing = []
    for path in sorted((PACKAGE / "tui").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            if any(n.split(".")[0] == "importlib" for n in names):
                probing.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert probing == []


# --------------------------------------------------------------------------- declared, not probed

# ``getattr(x, "name", default)`` / ``hasattr(x, "name")`` on the project's own objects asks
# whether a part has a capability instead of the part declaring it. Allowed: platform flags
# (``getattr(os, "O_NOFOLLOW", 0)``) and details another library's exceptions carry in some
# of its versions only. A field read by a name held in a variable is no probe.
LIBRARY_DETAILS = {
    ("core/files.py", "exc", "sqlite_errorcode"),
    ("core/vault/errors.py", "exc", "sqlite_errorcode"),
    ("core/pgindex/conn.py", "exc", "diag"),
    ("core/pgindex/conn.py", "diag", "message_primary"),
}
# Probes still to be declared; this list may only shrink.
KNOWN_PROBES: set[tuple[str, str, str]] = set()


def _probes_in(tree: ast.AST) -> set[tuple[str, str]]:
    """(what is probed, the attribute) of every getattr/hasattr of ``tree``."""
    loops: dict[str, list[str]] = {}  # `for name in ("a", "b")`: the names it takes
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.For)
            and isinstance(node.target, ast.Name)
            and isinstance(node.iter, ast.Tuple)
            and all(isinstance(e, ast.Constant) for e in node.iter.elts)
        ):
            loops[node.target.id] = [ast.unparse(e) for e in node.iter.elts]
    out: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and len(node.args) >= 2
        ):
            continue
        target, name = ast.unparse(node.args[0]), node.args[1]
        if target == "os":
            continue  # a platform flag
        if isinstance(name, ast.Constant):
            out.add((target, str(name.value)))
        elif isinstance(name, ast.Name) and name.id in loops:
            out.add((target, "<dynamic>"))  # constant names, one at a time
        # else: a field read by a name held in a variable
    return out


def _probes() -> set[tuple[str, str, str]]:
    """(file, what is probed, the attribute) of every getattr/hasattr in core/ and tui/."""
    out: set[tuple[str, str, str]] = set()
    for package in ("core", "tui"):
        for path in sorted((PACKAGE / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            where = str(path.relative_to(PACKAGE))
            out |= {(where, target, attribute) for target, attribute in _probes_in(tree)}
    return out


def test_capabilities_are_declared_not_probed() -> None:
    probes = _probes() - LIBRARY_DETAILS
    assert probes <= KNOWN_PROBES, sorted(probes - KNOWN_PROBES)


def test_the_probe_finder_sees_a_probe() -> None:
    source = (
        'for n in ("a", "b"):\n    getattr(store, n, None)\n'
        'hasattr(app, "key_for")\n'
        'getattr(os, "O_NOFOLLOW", 0)\n'
        "getattr(row, field.name)\n"
    )
    assert _probes_in(ast.parse(source)) == {("store", "<dynamic>"), ("app", "key_for")}
