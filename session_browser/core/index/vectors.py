"""Vectors beside the index: what recall by meaning reads (hybrid mode).

A session's messages that a person would search for (every role but tool output) are cut into
windows of :data:`WINDOW_MESSAGES` consecutive messages, each window's text cut to
:data:`WINDOW_CHARS` characters (about 128 tokens: embedding costs per token), and each window
embedded into one unit vector, stored as int8 (``round(127·v)``: 384 bytes a window for
all-MiniLM-L6-v2) in a SQLite file beside the index (:func:`vectors_path`). Per window it keeps
the session's file, the window's position and its first and last message index (a hit found
by meaning is anchored at its window); per file, its size and how many messages were embedded,
so a grown session embeds only its last, unfinished window and the new ones
(:func:`build_vectors`). A window's text is embedded once: its hash is kept with its vector, and
a window whose text the file already holds (a resumed or forked session repeats the windows of
the one it copied) takes that vector. A build commits file by file in batches (stopped, it
resumes where it stopped) and reads the index through a connection of its own, so it never
blocks a search.

:class:`VectorIndex` reads them: the matrix loaded once per version of the file (float32 in
memory), a brute-force cosine over it (NumPy), the best window per session. A missing or
unreadable file is not an error: the search answers lexically and says why
(:class:`VectorsUnavailable`).
"""

from __future__ import annotations

import collections
import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..embed.base import blas_threads, helper
from ..paths import lock_file

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..embed import Embedder

#: Messages a window holds, and the characters of its text that are embedded (about 96
#: tokens: embedding costs per token, and a 30,000-session store must embed in minutes).
WINDOW_MESSAGES = 12
WINDOW_CHARS = 400
#: Characters of one message read into a window (a long message does not fill it alone).
MESSAGE_CHARS = 200
#: Roles whose text is not embedded: tool output is not what a person searches for.
SKIPPED_ROLES = ("tool", "function", "tool_result")
#: Windows embedded (and committed) together.
BATCH_WINDOWS = 256
#: Sessions nearest the whole question whose windows are also asked by its parts.
PARTS_POOL = 300
#: Version of the file's layout and of how windows are cut: another one is rebuilt.
SCHEMA = "2"
SUFFIX = ".vectors"

Progress = Callable[[int, int], None]  # (sessions done, sessions to embed)


class VectorsUnavailable(RuntimeError):
    """The vectors cannot be read: missing, damaged, or made by another model."""


class VectorsBusy(RuntimeError):
    """Another process is building the same vectors."""


@contextmanager
def _building(path: Path, *, wait: bool = False) -> Iterator[None]:
    """One build of the vectors at ``path`` at a time (an exclusive lock on ``path.lock``;
    ``wait``: for the one running to end, else :class:`VectorsBusy`). While it builds,
    ``path.building`` names its process (:func:`updating`)."""
    fd = lock_file(Path(str(path) + ".lock"))
    marker = Path(str(path) + ".building")
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                raise VectorsBusy(f"another process is building {path}") from None
        marker.write_text(str(os.getpid()), encoding="ascii")
        try:
            yield
        finally:
            with suppress(FileNotFoundError):
                marker.unlink()
    finally:
        os.close(fd)


def updating(db_path: str | os.PathLike[str]) -> bool:
    """Whether a process is building the vectors of the index at ``db_path`` now."""
    try:
        pid = int(Path(str(vectors_path(db_path)) + ".building").read_text(encoding="ascii"))
    except (OSError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False  # (a build that died: its marker stays until the next one)
    except PermissionError:
        pass
    return True


#: The child that brings vectors up to date after an index update (:func:`follow`).
_FOLLOW_CODE = (
    "import sys; from session_browser.core.index.vectors import follow_main; "
    "sys.exit(follow_main(sys.argv[1:]))"
)
_children: list[Any] = []


def follow(db_path: str | os.PathLike[str]) -> bool:
    """After an index update: when the index at ``db_path`` has vectors (they were built once:
    hybrid mode is in use), bring them up to date in a process of its own (niced, one
    embedding process, its output in ``<vectors>.log``), so no search waits for it. One such
    process waits at a time behind the one building (``<vectors>.queue``): it lists the work
    once that one is done, so it sees this update too. Whether a process was started."""
    import subprocess
    import sys

    from ..paths import package_env

    path = vectors_path(db_path)
    if not path.is_file() or fcntl is None:
        return False
    _children[:] = [c for c in _children if c.poll() is None]  # (reaped)
    queue = lock_file(Path(str(path) + ".queue"))
    try:
        try:
            fcntl.flock(queue, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # one is waiting already: it will list this update's work
        # The child inherits the locked queue (the same open file): the lock is held from
        # now until the child is building, so the updates that come while it starts (the
        # interpreter, the model) start no other process.
        log = Path(str(path) + ".log")
        try:
            with open(log, "ab") as out:
                os.chmod(log, 0o600)
                child = subprocess.Popen(
                    [sys.executable, "-c", _FOLLOW_CODE, str(db_path), str(queue)],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    env=package_env(),
                    pass_fds=(queue,),
                )
        except OSError:
            return False
    finally:
        os.close(queue)
    _children.append(child)
    return True


def follow_main(argv: list[str]) -> int:
    """(The process :func:`follow` starts) ``argv``: the index. Waits for a build running to
    end, then embeds what changed with the model the vectors were made by."""
    import sys

    from ..embed import EmbedderUnavailable, embedder_named

    if len(argv) not in (1, 2) or (len(argv) == 2 and not argv[1].isdigit()):
        print("usage: follow_main DB [QUEUE_FD]", file=sys.stderr)
        return 2
    db_path = argv[0]
    path = vectors_path(db_path)
    # the queue lock :func:`follow` took and handed down (released when this process ends)
    queue = int(argv[1]) if len(argv) == 2 else -1
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)) as db:
            meta = _meta(db)
        if meta.get("schema") != SCHEMA:
            # an older layout is rebuilt whole only when asked (`index vectors`), never
            # behind the user's back by an update
            print(f"vectors of {db_path} are of an older layout: not updated", file=sys.stderr)
            return 0
        embedder = embedder_named(meta.get("model", ""))
    except (sqlite3.Error, EmbedderUnavailable) as exc:
        print(f"vectors of {db_path} not updated: {exc}", file=sys.stderr)
        return 1
    with suppress(OSError):
        os.nice(10)
    try:
        if queue < 0:
            queue = lock_file(Path(str(path) + ".queue"))
            if fcntl is not None:
                try:
                    fcntl.flock(queue, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return 0  # another waits already
        with _building(path, wait=True):
            os.close(queue)  # (from now on, an update starts the next one)
            queue = -1
            report = _build(db_path, path, embedder, None, None, 1)
    except (OSError, sqlite3.Error) as exc:
        print(f"vectors of {db_path} not updated: {exc}", file=sys.stderr)
        return 1
    finally:
        if queue >= 0:
            os.close(queue)
    print(
        f"{time.strftime('%Y-%m-%d %H:%M:%S')} {db_path}: {report.sessions} sessions "
        f"({report.windows} windows, {report.embedded} texts embedded), {report.removed} "
        f"removed in {report.seconds:.1f} s",
        flush=True,
    )
    return 0


def vectors_path(db_path: str | os.PathLike[str]) -> Path:
    """Where the vectors of the index at ``db_path`` live: beside it."""
    return Path(str(db_path) + SUFFIX)


def _connect(path: Path) -> sqlite3.Connection:
    if not path.exists():  # private, as the index is: the vectors say what sessions hold
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    db = sqlite3.connect(str(path), timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS files(
            file TEXT PRIMARY KEY, size INTEGER NOT NULL, messages INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS windows(
            file TEXT NOT NULL, pos INTEGER NOT NULL, first INTEGER NOT NULL,
            last INTEGER NOT NULL, vec BLOB NOT NULL, hash BLOB NOT NULL,
            PRIMARY KEY(file, pos)) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS windows_hash ON windows(hash);
        """
    )
    return db


def _meta(db: sqlite3.Connection) -> dict[str, str]:
    return dict(db.execute("SELECT key, value FROM meta").fetchall())


def window_text(messages: Sequence[tuple[str, str]]) -> str:
    """The text a window embeds from its (role, text) messages: the user's turns first (what
    a person asked is what they remember), then the others, each message's first
    :data:`MESSAGE_CHARS` characters, one per line, cut to :data:`WINDOW_CHARS`."""
    first = [t for role, t in messages if role == "user"]
    rest = [t for role, t in messages if role != "user"]
    return "\n".join(t[:MESSAGE_CHARS].strip() for t in (*first, *rest))[:WINDOW_CHARS]


@dataclass
class _Session:
    sid: int
    file: str
    size: int
    start: int  # the first window position to embed (earlier ones are kept)
    embedded: int  # messages embedded before (0: none)
    nmsg: int  # messages the index holds (how many windows, about)


@dataclass
class BuildReport:
    """What :func:`build_vectors` did."""

    sessions: int = 0  # sessions embedded (new or grown)
    windows: int = 0  # windows written (new or grown sessions')
    embedded: int = 0  # of them, texts embedded (the others repeat a text embedded before)
    removed: int = 0  # sessions whose vectors were dropped (gone from the index)
    seconds: float = 0.0
    stopped: bool = False


def _messages(index: sqlite3.Connection, sid: int) -> list[tuple[int, str, str]]:
    """(index, role, text) of a session's embedded messages, each once (a long message is
    stored in parts: its first part)."""
    out: list[tuple[int, str, str]] = []
    last = None
    marks = ",".join("?" * len(SKIPPED_ROLES))
    # by the session's range of row ids (the primary key): ``messages`` has no index on sid
    for idx, role, text in index.execute(
        "SELECT m.idx, coalesce(m.role, ''), m.text FROM sessions s JOIN messages m "
        "ON m.id BETWEEN s.row_lo AND s.row_hi WHERE s.sid = ? AND m.sid = s.sid "
        f"AND coalesce(m.role, '') NOT IN ({marks}) ORDER BY m.id",
        (sid, *SKIPPED_ROLES),
    ):
        if idx != last and text.strip():
            out.append((idx, role, text))
        last = idx
    return out


def _work(index: sqlite3.Connection, vec: sqlite3.Connection) -> tuple[list[_Session], list[str]]:
    """The sessions to embed (new, grown or rewritten) and the files whose vectors to drop."""
    known = {f: (s, n) for f, s, n in vec.execute("SELECT file, size, messages FROM files")}
    todo: list[_Session] = []
    seen: set[str] = set()
    for sid, file, size, nmsg in index.execute(
        "SELECT sid, file, size, nmsg FROM sessions ORDER BY sid"
    ):
        seen.add(file)
        before = known.get(file)
        if before is not None and before[0] == size:
            continue
        grown = before is not None and size > before[0]
        embedded = before[1] if grown and before is not None else 0
        todo.append(_Session(sid, file, size, embedded // WINDOW_MESSAGES, embedded, nmsg))
    return todo, [f for f in known if f not in seen]


def build_vectors(
    db_path: str | os.PathLike[str],
    embedder: Embedder,
    *,
    progress: Progress | None = None,
    stop: Callable[[], bool] | None = None,
    workers: int = 1,
) -> BuildReport:
    """Bring the vectors of the index at ``db_path`` up to date with ``embedder``: embed the
    windows of new sessions and the new windows of grown ones, drop those of sessions gone.
    Vectors of another model (or a damaged file) are rebuilt from nothing. ``workers`` > 1
    embeds in that many processes (forked: each holds the model; BLAS on one thread each)
    while this one reads the index and writes the vectors."""
    path = vectors_path(db_path)
    with _building(path):
        return _build(db_path, path, embedder, progress, stop, workers)


def _quantized(vectors: npt.NDArray[np.float32]) -> bytes:
    """Unit vectors as int8 rows: ``round(127·v)``."""
    import numpy as np

    out: bytes = np.clip(np.rint(vectors * 127.0), -127, 127).astype(np.int8).tobytes()
    return out


def _embed_in_worker(name: str, texts: list[str]) -> bytes:
    """(In a worker process) ``texts`` embedded by the embedder named ``name``, quantized."""
    from ..embed import embedder_named

    return _quantized(embedder_named(name).embed(texts))


Rows = list[tuple[str, int, int, int, str]]


def _prepare(index: sqlite3.Connection, batch: Sequence[_Session]) -> tuple[Rows, dict[str, int]]:
    """The windows of ``batch`` to embed (file, position, first, last, text), and how many
    messages each session still unchanged has (a session changed since it was listed is left
    to the next build)."""
    rows: Rows = []
    counts: dict[str, int] = {}
    for s in batch:
        now = index.execute("SELECT size FROM sessions WHERE sid = ?", (s.sid,))
        if now.fetchone() != (s.size,):
            continue
        msgs = _messages(index, s.sid)
        if len(msgs) < s.embedded:  # rewritten, not grown: all again
            s.start = 0
        counts[s.file] = len(msgs)
        for pos in range(s.start, (len(msgs) + WINDOW_MESSAGES - 1) // WINDOW_MESSAGES):
            part = msgs[pos * WINDOW_MESSAGES : (pos + 1) * WINDOW_MESSAGES]
            text = window_text([(role, t) for _i, role, t in part])
            rows.append((s.file, pos, part[0][0], part[-1][0], text))
    return rows, counts


def digest(text: str) -> bytes:
    """What identifies a window's text (its vector is reused for the same text)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass
class _Batch:
    """One batch of sessions on its way: its windows, the vectors already known for some of
    their texts, and the texts sent to be embedded (each once)."""

    sessions: list[_Session]
    rows: Rows
    counts: dict[str, int]
    hashes: list[bytes]
    known: dict[bytes, bytes]  # text hash -> stored vector (the same text embedded before)
    fresh: dict[bytes, int]  # text hash -> its place among the texts embedded now
    borrowed: dict[bytes, _Batch]  # text hash -> the earlier batch embedding it now
    result: Any = None  # the fresh texts' vectors (bytes), or a worker's promise of them

    def vector(self, h: bytes, dim: int) -> bytes:
        """The vector of the window text whose hash is ``h`` (once this batch is embedded)."""
        got = self.known.get(h)
        if got is not None:
            return got
        other = self.borrowed.get(h)
        if other is not None:  # (finished first: batches finish in order)
            return other.vector(h, dim)
        j = self.fresh[h]
        blob: bytes = self.result
        return blob[j * dim : (j + 1) * dim]

    def vectors(self, dim: int) -> list[bytes]:
        """Each window's vector, in the order of :attr:`rows`."""
        return [self.vector(h, dim) for h in self.hashes]


def _plan(
    vec: sqlite3.Connection,
    sessions: list[_Session],
    rows: Rows,
    counts: dict[str, int],
    inflight: dict[bytes, _Batch],
) -> tuple[_Batch, list[str]]:
    """``rows`` as a batch, and the texts of it to embed: each text once, and none whose
    vector the file already holds or an earlier batch in ``inflight`` is embedding (a resumed
    or forked session repeats the windows of the one it copied)."""
    batch = _Batch(sessions, rows, counts, [digest(r[4]) for r in rows], {}, {}, {})
    texts: list[str] = []
    for h, r in zip(batch.hashes, rows, strict=True):
        if h in batch.known or h in batch.fresh or h in batch.borrowed:
            continue
        other = inflight.get(h)
        if other is not None:
            batch.borrowed[h] = other
            continue
        got = vec.execute("SELECT vec FROM windows WHERE hash = ? LIMIT 1", (h,)).fetchone()
        if got is not None:
            batch.known[h] = got[0]
        else:
            batch.fresh[h] = len(texts)
            texts.append(r[4])
    return batch, texts


def _write(vec: sqlite3.Connection, batch: _Batch, vectors: list[bytes]) -> None:
    """One batch's windows and files, in one transaction."""
    counts = batch.counts
    with vec:
        for s in batch.sessions:
            if s.file not in counts:
                continue
            vec.execute("DELETE FROM windows WHERE file = ? AND pos >= ?", (s.file, s.start))
            vec.execute(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?)", (s.file, s.size, counts[s.file])
            )
        vec.executemany(
            "INSERT OR REPLACE INTO windows VALUES (?, ?, ?, ?, ?, ?)",
            [
                (r[0], r[1], r[2], r[3], v, h)
                for r, v, h in zip(batch.rows, vectors, batch.hashes, strict=True)
            ],
        )


def _open_for(path: Path, want: dict[str, str]) -> sqlite3.Connection:
    """The vectors file at ``path`` if its meta is ``want``; else (damaged, of another model
    or of an older layout) a new, empty one with that meta."""
    try:
        vec = _connect(path)
    except sqlite3.DatabaseError:
        pass
    else:
        try:
            if _meta(vec) == want:
                return vec
        except sqlite3.DatabaseError:
            pass
        vec.close()
    _remove(path)
    vec = _connect(path)
    with vec:
        vec.executemany("INSERT INTO meta VALUES (?, ?)", sorted(want.items()))
    return vec


def _build(
    db_path: str | os.PathLike[str],
    path: Path,
    embedder: Embedder,
    progress: Progress | None,
    stop: Callable[[], bool] | None,
    workers: int,
) -> BuildReport:
    started = time.perf_counter()
    report = BuildReport()
    index = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
    pool: Any = None
    try:
        want = {"schema": SCHEMA, "model": embedder.name, "dim": str(embedder.dim)}
        with closing(_open_for(path, want)) as vec:
            todo, gone = _work(index, vec)
            with vec:
                for file in gone:
                    vec.execute("DELETE FROM windows WHERE file = ?", (file,))
                    vec.execute("DELETE FROM files WHERE file = ?", (file,))
            report.removed = len(gone)
            if workers > 1 and todo:
                import multiprocessing

                pool = multiprocessing.get_context("fork").Pool(workers)
            pending: collections.deque[_Batch] = collections.deque()
            inflight: dict[bytes, _Batch] = {}  # texts being embedded, not yet written
            done = 0

            def finish() -> None:
                nonlocal done
                batch = pending.popleft()
                if pool is not None:
                    batch.result = batch.result.get()
                _write(vec, batch, batch.vectors(embedder.dim))
                for h in batch.fresh:
                    if inflight.get(h) is batch:
                        del inflight[h]
                report.windows += len(batch.rows)
                report.embedded += len(batch.fresh)
                report.sessions += len(batch.counts)
                done += len(batch.sessions)
                if progress is not None:
                    progress(done, len(todo))

            for batch in _batches(todo):
                if stop is not None and stop():
                    report.stopped = True
                    break
                rows, counts = _prepare(index, batch)
                planned, texts = _plan(vec, batch, rows, counts, inflight)
                if pool is not None:
                    planned.result = pool.apply_async(_embed_in_worker, (embedder.name, texts))
                else:
                    planned.result = _quantized(embedder.embed(texts)) if texts else b""
                inflight.update((h, planned) for h in planned.fresh)
                pending.append(planned)
                while len(pending) > (2 * workers if pool is not None else 0):
                    finish()
            while pending:
                finish()
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
        index.close()
    report.seconds = time.perf_counter() - started
    return report


def _batches(todo: Sequence[_Session]) -> Iterator[list[_Session]]:
    """Whole sessions, about :data:`BATCH_WINDOWS` windows at a time."""
    batch: list[_Session] = []
    size = 0
    for s in todo:
        batch.append(s)
        size += max(1, (s.nmsg + WINDOW_MESSAGES - 1) // WINDOW_MESSAGES - s.start)
        if size >= BATCH_WINDOWS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _remove(path: Path) -> None:
    for p in (path, Path(str(path) + "-wal"), Path(str(path) + "-shm")):
        with suppress(FileNotFoundError):
            p.unlink()


@dataclass(frozen=True)
class Window:
    """A session's best window for a query: its file, message range, and the session's
    closeness to the query (:meth:`VectorIndex.nearest`)."""

    file: str
    first: int
    last: int
    similarity: float


@dataclass(frozen=True)
class _Loaded:
    """One version of the vectors file in memory (never changed: a new version is a new one,
    so a search that holds it reads arrays that agree with each other)."""

    key: tuple[int, ...]
    matrix: npt.NDArray[np.float32]  # a row a window, float32
    files: list[str]  # a session's file, by its number
    starts: npt.NDArray[np.intp]  # each session's first row (its windows are consecutive)
    ends: npt.NDArray[np.intp]
    first: npt.NDArray[np.int64]  # each window's first and last message index
    last: npt.NDArray[np.int64]


@dataclass(frozen=True)
class Closeness:
    """A query's closeness to every session of one version of the vectors
    (:meth:`VectorIndex.closeness`), kept so that it can be worked out ahead of the search
    that asks for it (:meth:`~.semantic.Semantic.prefetch`)."""

    loaded: _Loaded
    close: npt.NDArray[np.float32]  # a session's closeness
    whole: npt.NDArray[np.float32]  # a window's cosine with the whole query
    pool: int  # sessions asked by the query's parts (0: it has none)


class VectorIndex:
    """The vectors of one index, read lazily and again when the file changed."""

    def __init__(self, db_path: str | os.PathLike[str]) -> None:
        self.db_path = Path(db_path)
        self.path = vectors_path(db_path)
        self._now: _Loaded | None = None
        self._lock = threading.Lock()  # one load at a time (searches and their prefetch)
        self.model = ""
        self.sessions = 0

    def _stamp(self) -> tuple[int, ...]:
        out: list[int] = []
        for p in (self.path, Path(str(self.path) + "-wal")):
            try:
                st = p.stat()
                out.extend((st.st_mtime_ns, st.st_size))
            except FileNotFoundError:
                out.extend((0, 0))
        return tuple(out)

    def load(self) -> None:
        """Read the vectors (when the file changed since last read). Raises
        :class:`VectorsUnavailable` saying why they cannot be read."""
        with self._lock:
            self._load()

    def _loaded(self) -> _Loaded:
        self.load()
        assert self._now is not None
        return self._now

    def _load(self) -> None:
        import numpy as np

        if not self.path.is_file():
            raise VectorsUnavailable("no vectors yet ('session-browser index vectors' builds them)")
        key = self._stamp()
        if self._now is not None and key == self._now.key:
            return
        try:
            with closing(sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=5)) as db:
                meta = _meta(db)
                dim = int(meta.get("dim", "0"))
                if meta.get("schema") != SCHEMA or dim <= 0:
                    raise VectorsUnavailable(
                        "the vectors file is of another version"
                        " ('session-browser index vectors' builds them again)"
                    )
                files: dict[str, int] = {}
                owner: list[int] = []
                first: list[int] = []
                last: list[int] = []
                blobs: list[bytes] = []
                for file, a, b, blob in db.execute(
                    "SELECT file, first, last, vec FROM windows ORDER BY file, pos"
                ):
                    if len(blob) != dim:
                        raise VectorsUnavailable("a vector of the wrong length")
                    owner.append(files.setdefault(file, len(files)))
                    first.append(a)
                    last.append(b)
                    blobs.append(blob)
        except sqlite3.DatabaseError as exc:
            raise VectorsUnavailable(f"the vectors file is unreadable ({exc})") from None
        if not blobs:
            raise VectorsUnavailable("no vectors yet ('session-browser index vectors' builds them)")
        # float32 in memory (4 bytes a value: 150 MB for 100k windows of 384), so a query is
        # one matrix-vector product, not a conversion of the whole matrix first
        quantized = np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), dim)
        owners = np.asarray(owner, dtype=np.int64)
        # where each session's windows start and end (rows are in file order)
        starts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
        self._now = _Loaded(
            key=key,
            matrix=quantized.astype(np.float32) * np.float32(1.0 / 127.0),
            files=list(files),
            starts=starts,
            ends=np.r_[starts[1:], len(owners)],
            first=np.asarray(first, dtype=np.int64),
            last=np.asarray(last, dtype=np.int64),
        )
        self.model = meta.get("model", "")
        self.sessions = len(files)

    def closeness(self, query: npt.NDArray[np.float32], k: int) -> Closeness:
        """``query``'s closeness to every session (``query``: unit vectors, one a row: the
        whole query, then its parts if any; ``k``: how many nearest sessions will be asked
        for). A session's closeness is its best window's cosine with the whole; with parts,
        the mean of that and of the parts' mean best cosine (:mod:`..search.hybrid`)."""
        import numpy as np

        now = self._loaded()
        if query.ndim == 1:
            query = query[None, :]
        if query.ndim != 2 or query.shape[1] != now.matrix.shape[1]:
            raise VectorsUnavailable("the query vector does not fit the stored vectors")
        with blas_threads(1):
            whole = _product(now.matrix, query[0].astype(np.float32))
        # each session's best window (a session's windows are consecutive rows)
        close = np.maximum.reduceat(whole, now.starts)
        pool = 0
        if len(query) > 1:
            pool = min(max(PARTS_POOL, k), len(close))
            close = _with_parts(now, close, query[1:], pool)
        return Closeness(now, close, whole, pool)

    def nearest(
        self, query: npt.NDArray[np.float32], k: int, scored: Closeness | None = None
    ) -> list[Window]:
        """The ``k`` sessions nearest ``query`` (:meth:`closeness`; ``scored``: worked out
        before, used when it is of the vectors as they are now and went far enough), each
        with its best window for the whole query, nearest first."""
        import numpy as np

        now = self._loaded()
        if (
            scored is None
            or scored.loaded is not now
            or (scored.pool and scored.pool < min(k, len(scored.close)))
        ):
            scored = self.closeness(query, k)
        close, whole = scored.close, scored.whole
        k = min(k, len(close))
        if k <= 0:
            return []
        top = np.argpartition(-close, k - 1)[:k] if k < len(close) else np.arange(len(close))
        top = top[np.lexsort((top, -close[top]))]  # nearest first (ties: the earlier session)
        out: list[Window] = []
        for o in top.tolist():
            lo, hi = int(now.starts[o]), int(now.ends[o])
            i = lo + int(np.argmax(whole[lo:hi]))
            out.append(Window(now.files[o], int(now.first[i]), int(now.last[i]), float(close[o])))
        return out


#: Windows from which the product of a query with every window is split between two threads.
SPLIT_ROWS = 8192


def _product(matrix: npt.NDArray[np.float32], vector: npt.NDArray[np.float32]) -> Any:
    """``matrix @ vector``, its rows split between this thread and a helper thread when the
    machine has two cores or more (each half on the caller's BLAS limit, one thread): the
    product reads the whole matrix from memory once and is bound by it, and two cores read it
    about twice as fast (61,207 windows on the quiet 2-core host: 6.6 -> 2.8 ms). The caller
    holds the BLAS limit (:func:`~..embed.base.blas_threads`)."""
    import numpy as np

    n = len(matrix)
    pool = helper() if n >= SPLIT_ROWS else None
    if pool is None:
        return matrix @ vector
    out = np.empty(n, dtype=np.float32)
    half = n // 2
    other = pool.submit(np.matmul, matrix[half:], vector, out=out[half:])
    np.matmul(matrix[:half], vector, out=out[:half])
    other.result()
    return out


def _with_parts(
    now: _Loaded, best: npt.NDArray[np.float32], parts: npt.NDArray[np.float32], pool: int
) -> npt.NDArray[np.float32]:
    """Closeness with the parts of a question: the ``pool`` sessions nearest the whole get
    the mean of their best cosine with the whole and their parts' mean best cosine; the
    others fall below every one of them (a session far from the whole question is not
    lifted by its parts: with the 300 nearest, the 200 paraphrased questions of the bench
    rank as with all 30,000 sessions). Only the pool's windows are multiplied by the parts:
    a product of every window with several vectors costs twice one with the whole."""
    import numpy as np

    n = len(best)
    chosen = np.argpartition(-best, pool - 1)[:pool] if pool < n else np.arange(n)
    lo, hi = now.starts[chosen], now.ends[chosen]
    counts = hi - lo
    # the rows of the chosen sessions' windows, session after session
    offsets = np.r_[0, np.cumsum(counts)[:-1]]
    rows = np.repeat(lo - offsets, counts) + np.arange(int(counts.sum()))
    with blas_threads(1):
        sims = now.matrix[rows] @ parts.astype(np.float32).T  # (rows, parts)
    per_part = np.maximum.reduceat(sims, offsets, axis=0)  # (chosen, parts)
    out = np.full(n, -2.0, dtype=np.float32)  # (below any mean of cosines)
    out[chosen] = (best[chosen] + per_part.mean(axis=1)) * np.float32(0.5)
    return out


def size_of(path: Path) -> int:
    """Bytes of the vectors file (with its write-ahead log)."""
    total = 0
    for p in (path, Path(str(path) + "-wal")):
        with suppress(FileNotFoundError):
            total += p.stat().st_size
    return total


def vectors_status(db_path: str | os.PathLike[str]) -> dict[str, object] | None:
    """What the vectors beside the index at ``db_path`` hold (None: there are none):
    their file, model, sessions (and of how many the index holds), windows and bytes, or the
    error that keeps them unread; and whether a process is bringing them up to date."""
    path = vectors_path(db_path)
    if not path.is_file():
        return None
    out: dict[str, object] = {"path": str(path), "bytes": size_of(path)}
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)) as db:
            out["model"] = _meta(db).get("model")
            out["sessions"] = db.execute("SELECT count(*) FROM files").fetchone()[0]
            out["windows"] = db.execute("SELECT count(*) FROM windows").fetchone()[0]
        with closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5)) as db:
            out["of_sessions"] = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        out["error"] = f"unreadable ({exc})"
    out["updating"] = updating(db_path)
    return out
