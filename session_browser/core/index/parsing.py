"""Reading and parsing the files of a first build: in this process, or in one worker process
while this one writes the rows of the batches before.

A first build spends about as long reading, parsing and (with the vault on) keeping the
files as it spends writing rows, and a thread beside the writer cannot help (both need the
GIL for every row). A worker process can: it reads and parses batch n+1 while this process
writes batch n, and hands over each file's rows. With the vault on, it then keeps the bytes
it read in the vault itself (hashing, compressing and the catalog's rows cost this process
nothing), and says so: every write to the index stays in this process, in the same
transactions as without it. It ends when this process closes its pipe (or dies: the pipe
closes then too), and if it fails, the batches it did not hand back are parsed here; what it
could not keep in the vault is reported (:attr:`Worker.unkept`), so it is kept again later.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Generator, Sequence
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, cast

from ..files import FileIdentity
from ..forget.deny import screen, screen_bytes, screens
from ..search.hidden import hidden_rows
from ..search.rows import Parsed, extract, safely, skip_reason
from ..sources.base import SessionDoc, SessionSource, Skip
from ..vault.feed import Kept, VaultFeed
from ..vault.whole import export_bytes
from .write import content_words, stored_texts

log = logging.getLogger("session_browser.index")

#: One file to parse: (name, identity, the parse state kept of it or None).
Task = tuple[str, tuple[int, int, int], bytes | None]
#: One file parsed: (name, its rows or why it is skipped, whether the parse resumed).
Done = tuple[str, Parsed | str, bool | None]
IN_FLIGHT = 2  # batches handed to a worker and not yet back (what it holds at most)
AHEAD = 8  # batches parsed (here or by a worker) and waiting for their turn, at most
MAX_WORKERS = 4  # worker processes of one build at most


def worker_count() -> int:
    """How many worker processes a first build parses with: one for each core this process
    may run on beyond its own (which writes), at least one (it also parses when it would
    otherwise wait), at most :data:`MAX_WORKERS`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (not on Linux)
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores - 1))


def parse_one(
    source: SessionSource,
    name: str,
    ident: tuple[int, int, int],
    prior: bytes | None,
    *,
    folded: bool,
    screening: bool | None = None,
) -> Done:
    """One file as index rows, or the reason it cannot be indexed (anything its content
    raises included). ``screening``: whether the denylist may change or refuse anything now
    (:func:`~..forget.deny.screens`), when the caller asked once for a batch of files."""
    try:
        doc = source.parse(name, ident, prior)
        resumed = doc.resumed
        if isinstance(doc, Skip):
            return name, doc.reason, resumed
        if not screened(doc, name, screening):
            return name, FORGOTTEN, resumed
        try:
            parsed = extract(name, FileIdentity(*ident), doc.data, folded=folded)
        except Exception as exc:  # one file's content never stops the others
            return name, skip_reason(exc), resumed
        if doc.automated is not None:
            parsed.row.settle_automation(doc.automated)
        parsed.state = doc.state
        parsed.hidden = safely([], hidden_rows, doc.data, folded)
        parsed.partly = doc.skipped
        # A session that is no file of its own is kept as the source read it (its export).
        parsed.raw = (
            export_bytes(source.kind, name, doc.data) if source.kept_whole(name) else doc.raw
        )
        if not folded and parsed.messages:  # (where it was parsed: a worker's share)
            parsed.words = content_words(stored_texts(parsed.messages))
        return name, parsed, resumed
    except Exception as exc:
        log.warning("%s: skipped: %s", name, exc)
        return name, skip_reason(exc), None


FORGOTTEN = "forgotten on purpose (session-browser forget --list)"


def parse_all(source: SessionSource, tasks: Sequence[Task], *, folded: bool) -> list[Done]:
    """:func:`parse_one` of each of a batch's ``tasks`` (the denylist looked at once for the
    batch, not once a file)."""
    screening = screens()
    return [parse_one(source, n, i, p, folded=folded, screening=screening) for n, i, p in tasks]


def screened(doc: SessionDoc, name: str, screening: bool | None = None) -> bool:
    """Apply the denylist to ``doc`` (see :mod:`~..forget.deny`): False when it is left
    out; its data and bytes redacted in place when a redacted text is in them (and no parse
    state kept: the file is read whole when it changes). ``screening``: what
    :func:`~..forget.deny.screens` said for the batch (None: asked here)."""
    if not (screens() if screening is None else screening):
        return True  # (the usual case: one look at the denylist and the settings)
    sid = str(doc.data.get("session_id") or Path(name).stem)
    data = screen(sid, doc.data)
    raw = doc.raw if doc.raw is None or data is None else screen_bytes(sid, doc.raw)
    if data is None or (doc.raw is not None and raw is None):
        return False
    if data is not doc.data or raw is not doc.raw:  # redacted: no parse state (it keeps text)
        doc.data, doc.raw, doc.state = data, raw, None
    return True


#: Where the worker keeps what it read: (source kind, vault dir); None: the vault is off.
VaultAt = tuple[str, Path] | None
ENDED = "end"  # the worker's last message: every batch it parsed was kept (or reported)
KEEP = "keep"  # (KEEP, files): files parsed in the index's process, for the worker to keep
KEEP_FILES = 1500  # files held to keep at most: then they are kept before the next parse
VAULT_NOTE = "vault"  # (VAULT_NOTE, problems): a batch the worker could not keep
DRAIN_SECONDS = 120.0  # how long closing waits for the worker to keep its last batch


def hand_over(done: list[Done]) -> list[Kept]:
    """The files of a parsed batch to keep in the vault, as the worker keeps them: each one's
    bytes leave its rows (they are kept by the worker, not sent) and it is marked as kept
    (with the vault off, nothing keeps them: the index's process has no use for them)."""
    kept: list[Kept] = []
    for name, item, _resumed in done:
        if isinstance(item, str) or item.raw is None:
            continue
        kept.append((name, item.session_id, len(item.messages), item.raw))
        item.raw = None
        item.kept = True
    return kept


def _work(tasks_fd: int, out_fd: int) -> None:
    """The worker (a fresh interpreter, see :class:`Worker`): its settings, then batches of
    tasks in and batches of parsed files out, until the tasks pipe closes. With the vault on,
    the files of each batch are kept once nothing waits to be parsed (the index's process
    waits for parsed batches, never for kept ones), with those it hands over (KEEP)."""
    tasks = Connection(tasks_fd, writable=False)
    out = Connection(out_fd, readable=False)
    # hand_back: the bytes read go back with the rows (another worker keeps them)
    source, folded, vault_at, hand_back = tasks.recv()
    # Tasks are read as they come, so a batch sent while a result is on its way never
    # waits for it (both pipes full would stop both processes).
    inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def read() -> None:
        try:
            while True:
                inbox.put(tasks.recv())
        except (EOFError, OSError):
            inbox.put(None)

    threading.Thread(target=read, daemon=True).start()
    # What goes back is pickled here and written by a thread of its own: a batch bigger than
    # the pipe holds would otherwise stop the parse until the index's process, busy writing
    # rows, reads it (measured: the worker idle a third of a first build).
    outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()

    def write() -> None:
        try:
            while (message := outbox.get()) is not None:
                out.send_bytes(message)
        except OSError:  # the index's process is gone: the tasks pipe ends the loop too
            return

    writer = threading.Thread(target=write, daemon=True)
    writer.start()

    def post(message: Any) -> None:
        outbox.put(pickle.dumps(message, pickle.HIGHEST_PROTOCOL))

    feed = (
        None
        if vault_at is None
        else VaultFeed(
            vault_at[0], source.root, vault_at[1], parts=source.part_files, source=source
        )
    )
    to_keep: list[Kept] = []

    def keep() -> None:
        assert feed is not None
        feed.keep(to_keep)
        to_keep.clear()
        if feed.problems:
            post((VAULT_NOTE, feed.problems))
            feed.problems = []

    try:
        post("ready")
        while True:
            try:
                if len(to_keep) >= KEEP_FILES:
                    raise queue.Empty  # (held bytes stay bounded)
                message = inbox.get_nowait() if to_keep else inbox.get()
            except queue.Empty:
                keep()
                continue
            if message is None:
                break
            if isinstance(message, tuple):  # (KEEP, files parsed there)
                to_keep.extend(message[1])
                continue
            done = parse_all(source, message, folded=folded)
            if not hand_back:
                kept = hand_over(done)  # (their bytes are not sent: kept here, or not at all)
                if feed is not None:
                    to_keep.extend(kept)
            post(done)
        if feed is not None:
            if to_keep:
                keep()
            feed.close()
        post(ENDED)
    except OSError:  # the index's process is gone
        return
    finally:
        outbox.put(None)
        writer.join()  # (everything posted is written, or the index's process is gone)


_BOOT = (
    "import sys\n"
    "root = sys.argv[1]\n"
    "if root not in sys.path:\n"
    "    sys.path.insert(0, root)\n"
    "from session_browser.core.index.parsing import _work\n"
    "_work(*map(int, sys.argv[2:]))\n"
)


class Worker:
    """One worker process parsing batches for a first build (see the module doc).

    A fresh interpreter running this module (not :mod:`multiprocessing`, which would run the
    caller's main script again in it), on two pipes of its own; its output goes nowhere.
    ``vault_at``: where it keeps the files it parsed (their rows come back marked as kept);
    ``hand_back``: it keeps none, and the bytes it read come back with the rows (for the
    worker that keeps them). Its settings are written to it by a thread of its own: it reads
    them once it has imported what it runs, and this process parses meanwhile. They are
    made once it is started: the source first learns what its copy would learn again of
    every file (:meth:`~..sources.base.SessionSource.learn_for_copies`)."""

    def __init__(
        self,
        source: SessionSource,
        *,
        folded: bool,
        vault_at: VaultAt,
        hand_back: bool = False,
    ) -> None:
        if not sys.executable or os.name != "posix":
            raise OSError("no interpreter to start on two pipes of its own")
        task_r, task_w = os.pipe()
        out_r, out_w = os.pipe()
        package = Path(__file__).resolve().parents[3]  # where session_browser is imported from
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", _BOOT, os.fspath(package), str(task_r), str(out_w)],
                pass_fds=(task_r, out_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except BaseException:
            for fd in (task_w, out_r):
                os.close(fd)
            raise
        finally:
            os.close(task_r)
            os.close(out_w)
        try:
            # (while the worker starts: what every copy would learn, learned once here; a
            # copy that was taught nothing learns it itself)
            try:
                source.learn_for_copies()
            except Exception as exc:
                log.warning("the parsing worker learns what its source knows itself: %s", exc)
            settings = pickle.dumps((source, folded, vault_at, hand_back))
        except BaseException:
            self._proc.kill()
            self._proc.wait()
            for fd in (task_w, out_r):
                os.close(fd)
            raise
        self._tasks = Connection(task_w, readable=False)
        self._results = Connection(out_r, writable=False)
        self.ready = False
        self.keeps = vault_at is not None
        self.unkept: list[str] = []  # why files it handed over may not be in the vault
        self._ended = False
        self._finished = False
        self._closed = False
        self._sending = threading.Lock()  # (the settings' thread, then this process's)
        self._later: list[Kept] = []  # files to keep handed over before it read its settings
        self._setup = threading.Thread(
            target=self._send_settings, args=(settings,), name="parse-worker-setup", daemon=True
        )
        self._setup.start()

    def _send_settings(self, settings: bytes) -> None:
        with self._sending, contextlib.suppress(OSError):  # (gone: its results pipe says so)
            self._tasks.send_bytes(settings)

    def poll_ready(self) -> bool:
        """Whether the worker has started (never waits)."""
        if not self.ready and self._results.poll():
            self.ready = self._results.recv() == "ready"
        return self.ready

    def send(self, batch: list[Task]) -> None:
        with self._sending:
            self._send_later()
            self._tasks.send(batch)

    def _send_later(self) -> None:
        """Send the files to keep held while it read its settings (under the send lock)."""
        if self._later:
            files, self._later = self._later, []
            self._tasks.send((KEEP, files))

    @property
    def results(self) -> Connection:
        """The pipe its parsed batches come back on (to wait on several workers at once)."""
        return self._results

    def has_result(self) -> bool:
        """Whether a batch is back (never waits)."""
        return self._results.poll()

    def recv(self) -> list[Done]:
        """The next batch back (what the worker says about the vault meanwhile is noted)."""
        while True:
            message = self._results.recv()
            if isinstance(message, list):
                return message
            self._note(message)

    def _note(self, message: Any) -> None:
        if message == ENDED:
            self._ended = True
        elif isinstance(message, tuple) and message[:1] == (VAULT_NOTE,):
            self.unkept.extend(str(p) for p in message[1])
            for problem in message[1]:
                log.warning("vault: %s", problem)

    def keep(self, files: list[Kept]) -> bool:
        """Hand files parsed in this process to the worker to keep in the vault (with those
        it parsed); False: it cannot take them (it keeps nothing, or it stopped)."""
        if not self.keeps or self._finished:
            return False
        try:
            ready = self.poll_ready()
        except (OSError, EOFError):  # it is gone
            return False
        if not ready:  # still starting: sent with what comes next, not waited for
            if len(self._later) + len(files) > KEEP_FILES:
                return False  # (the bytes held here stay bounded)
            self._later.extend(files)  # (if it never takes them, it never says it ended)
            return True
        try:
            with self._sending:
                self._send_later()
                self._tasks.send((KEEP, files))
        except OSError:
            return False
        return True

    def finish(self) -> None:
        """No more batches: the worker keeps what it was handed and ends (see :meth:`close`)."""
        if self._finished:
            return
        self._finished = True
        self._setup.join(DRAIN_SECONDS)  # (it ends once the worker read its settings, or died)
        if self._setup.is_alive():  # it never read them: it is stuck
            self._proc.kill()
            self._setup.join()
        with contextlib.suppress(OSError):
            with self._sending:
                self._send_later()
            self._tasks.close()

    def close(self) -> None:
        """:meth:`finish`, and wait for the worker to end (what it could not keep is noted
        in :attr:`unkept`)."""
        if self._closed:
            return
        self._closed = True
        self.finish()
        with contextlib.suppress(OSError, EOFError):  # EOF: it is gone
            while self._results.poll(DRAIN_SECONDS):
                message = self._results.recv()
                if not isinstance(message, list):
                    self._note(message)
        with contextlib.suppress(OSError):
            self._results.close()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self.keeps and not self._ended:
            self.unkept.append("the parsing worker stopped before it kept every file it read")


def picklable(value: Any) -> bool:
    try:
        pickle.dumps(value)
    except Exception:
        return False
    return True


def batches(
    todo: Sequence[Task],
    size: int,
    parse: Callable[[list[Task]], list[Done]],
    workers: Sequence[Worker] = (),
) -> Generator[list[Done], None, None]:
    """The parsed files of ``todo``, ``size`` at a time and in order (``parse``: one batch,
    in this process). With ``workers``, each started one holds up to :data:`IN_FLIGHT`
    batches, handed out in order; rather than wait for the next batch in line, this process
    parses the first batch nobody has taken (while fewer than :data:`AHEAD` parsed batches
    wait for their turn). A worker that fails is closed, and the batches it held are parsed
    by the others or here."""
    chunks = [list(todo[start : start + size]) for start in range(0, len(todo), size)]
    live = list(workers)
    held: dict[int, deque[int]] = {id(w): deque() for w in live}  # each worker's, in order
    free: deque[int] = deque(range(len(chunks)))  # the batches nobody has taken, in order
    got: dict[int, list[Done]] = {}  # parsed batches waiting for their turn

    def failed(worker: Worker, exc: BaseException) -> None:
        log.warning("a parsing worker stopped (%s): its batches are parsed again", exc)
        live.remove(worker)
        worker.close()
        free.extend(held.pop(id(worker)))
        ordered = sorted(free)
        free.clear()
        free.extend(ordered)

    def collect(worker: Worker, *, waiting: bool = True) -> bool:
        """Take the batch ``worker`` sent back (``waiting``: False, only one already
        back); whether one was taken."""
        try:
            if not waiting and not worker.has_result():
                return False
            batch = worker.recv()
        except Exception as exc:  # it died, or sent what cannot be read
            failed(worker, exc)
            return False
        got[held[id(worker)].popleft()] = batch
        return True

    try:
        for index in range(len(chunks)):
            while index not in got:
                for worker in list(live):
                    while held.get(id(worker)) and collect(worker, waiting=False):
                        pass
                for worker in list(live):
                    try:
                        if worker.poll_ready():
                            queue_ = held[id(worker)]
                            while len(queue_) < IN_FLIGHT and free:
                                worker.send(chunks[free[0]])
                                queue_.append(free.popleft())
                    except Exception as exc:
                        failed(worker, exc)
                if free and (free[0] == index or len(got) < AHEAD):
                    mine = free.popleft()  # (this one next, or a later one rather than wait)
                    got[mine] = parse(chunks[mine])
                    continue
                busy = {w.results: w for w in live if held[id(w)]}
                if not busy:
                    continue  # (nobody holds a batch: the next turn parses one here)
                for conn in wait(list(busy)):
                    collect(busy[cast(Connection, conn)])
            yield got.pop(index)
    finally:
        for worker in live:
            worker.finish()  # (the caller closes them: the first may keep files still)
