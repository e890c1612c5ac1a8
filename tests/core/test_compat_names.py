"""No public name of praisonaiagents 1.7.17's session-store classes is missing from ours."""

from __future__ import annotations

import inspect

import pytest

pstore = pytest.importorskip("praisonaiagents.session.store")
psqlite = pytest.importorskip("praisonaiagents.session.sqlite_store")

from session_browser.core import DefaultSessionStore, SqliteSessionStore, model  # noqa: E402

PAIRS = [
    (pstore.DefaultSessionStore, DefaultSessionStore),
    (psqlite.SqliteSessionStore, SqliteSessionStore),
    (pstore.SessionData, model.SessionData),
    (pstore.SessionMessage, model.SessionMessage),
    (pstore.CompactionCheckpoint, model.CompactionCheckpoint),
]


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


@pytest.mark.parametrize(("theirs", "ours"), PAIRS, ids=lambda c: c.__name__)
def test_no_public_name_missing(theirs: type, ours: type) -> None:
    missing = sorted(_public(theirs) - _public(ours))
    assert missing == [], f"{ours.__name__} lacks {missing}"


@pytest.mark.parametrize(("theirs", "ours"), PAIRS[:2], ids=lambda c: c.__name__)
def test_constants_equal(theirs: type, ours: type) -> None:
    names = ("BOOKEND_SIZE", "AUTOMATED_DEMOTION", "AUTOMATED_RATE_THRESHOLD", "PORTABLE_VERSION")
    for name in names:
        assert getattr(ours, name) == getattr(theirs, name), name


@pytest.mark.parametrize(("theirs", "ours"), PAIRS[:2], ids=lambda c: c.__name__)
def test_method_parameters_accepted(theirs: type, ours: type) -> None:
    """Every parameter name PraisonAI's public methods take, ours take too."""
    for name in _public(theirs):
        attr = getattr(theirs, name)
        if not callable(attr) or isinstance(attr, type):
            continue
        want = set(inspect.signature(attr).parameters) - {"self"}
        have = inspect.signature(getattr(ours, name)).parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in have.values()):
            continue
        assert want <= set(have), f"{name}: missing {sorted(want - set(have))}"


def test_constructor_arguments() -> None:
    want = set(inspect.signature(pstore.DefaultSessionStore.__init__).parameters) - {"self"}
    have = set(inspect.signature(DefaultSessionStore.__init__).parameters)
    assert want <= have


def test_session_dir_is_a_str(tmp_path) -> None:
    store = DefaultSessionStore(str(tmp_path))
    assert isinstance(store.session_dir, str)
    assert store.session_dir == str(tmp_path)
    assert store.session_dir == tmp_path
    assert store.session_dir / "x.json" == tmp_path / "x.json"


@pytest.mark.parametrize(("theirs", "ours"), PAIRS[:2], ids=lambda c: c.__name__)
def test_same_praisonai_protocols_satisfied(tmp_path, theirs: type, ours: type) -> None:
    """Every runtime-checkable protocol PraisonAI's store satisfies, ours does too."""
    protocols = pytest.importorskip("praisonaiagents.session.protocols")
    kinds = [
        c
        for c in vars(protocols).values()
        if isinstance(c, type) and getattr(c, "_is_runtime_protocol", False)
    ]
    their_store = (
        theirs(str(tmp_path / "t"), db_path=str(tmp_path / "t.db"))
        if ours is SqliteSessionStore
        else theirs(str(tmp_path / "t"))
    )
    our_store = ours(str(tmp_path / "o"))
    wanted = [k.__name__ for k in kinds if isinstance(their_store, k)]
    assert "PortableSessionStoreProtocol" in wanted
    assert [k.__name__ for k in kinds if isinstance(our_store, k)] == wanted
