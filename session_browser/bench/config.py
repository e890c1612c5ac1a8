"""What the benchmark measures: the store kinds, the options and the fixed counts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

Progress = Callable[[str], None]

SCHEMA = "session-browser-bench/1"

OURS = "ours"
SCAN = "scan"
PRAISON_JSON = "praisonai-json"
PRAISON_SQLITE = "praisonai-sqlite"
STORE_KINDS = (OURS, SCAN, PRAISON_JSON, PRAISON_SQLITE)
STORE_LABELS = {
    OURS: "ours (indexed)",
    SCAN: "ours (scan)",
    PRAISON_JSON: "PraisonAI JSON",
    PRAISON_SQLITE: "PraisonAI SQLite",
}
PEERS = (PRAISON_JSON, PRAISON_SQLITE)
PI = "pi"
PI_SCAN = "pi-scan"
GROUP = "group"
PI_KINDS = (PI, PI_SCAN)
MIXED_KINDS = (GROUP,)
CLAUDE = "claude"
CODEX = "codex"
GEMINI = "gemini"
COPILOT = "copilot"
KIMI = "kimi"
CLINE = "cline"
AIDER = "aider"
OPENCODE = "opencode"
GOOSE = "goose"
#: The coding agents' names in the store labels, by the source kind that reads their files.
AGENT_NAMES = {
    CLAUDE: "Claude",
    CODEX: "Codex",
    GEMINI: "Gemini",
    COPILOT: "Copilot",
    KIMI: "Kimi",
    CLINE: "Cline",
    AIDER: "Aider",
    OPENCODE: "OpenCode",
    GOOSE: "Goose",
}
#: The coding agents' stores measured (our index over their files, our scan of them), by
#: the source kind they read.
AGENT_KINDS = {fmt: (fmt, f"{fmt}-scan") for fmt in AGENT_NAMES}
#: The source kind each of those stores reads.
AGENT_OF = {kind: fmt for fmt, kinds in AGENT_KINDS.items() for kind in kinds}
ALL_KINDS = (*STORE_KINDS, *PI_KINDS, *MIXED_KINDS, *AGENT_OF)
STORE_LABELS |= {
    PI: "ours (Pi index)",
    PI_SCAN: "ours (Pi scan)",
    GROUP: "ours (JSON + Pi)",
} | {
    kind: f"ours ({AGENT_NAMES[fmt]} {'index' if kind == fmt else 'scan'})"
    for fmt, kinds in AGENT_KINDS.items()
    for kind in kinds
}
#: Which stores measure which corpus format.
FORMAT_KINDS = {"json": STORE_KINDS, "pi": PI_KINDS, "mixed": MIXED_KINDS, **AGENT_KINDS}
#: Our indexed stores, brought up to date by ``reconcile()`` (the targets judge the first
#: one measured).
OUR_INDEXES = (OURS, PI, GROUP, *AGENT_KINDS)
#: Indexed stores (a cold build, a reopen, a reconcile after an outside change).
INDEXED_KINDS = (OURS, PRAISON_SQLITE, PI, GROUP, *AGENT_KINDS)
#: Stores that cannot be written to (no write-through phase).
READ_ONLY_KINDS = (PI, PI_SCAN, *AGENT_OF)
#: Scanning stores (they answer a round-robin subset of the queries).
SCAN_KINDS = (SCAN, PI_SCAN, *(scan for _index, scan in AGENT_KINDS.values()))

SEARCH_LIMIT = 10
UPDATE_REPEATS = 5
OUR_RECENT_REPEATS = 50
SCAN_RECENT_REPEATS = 3
WARMUP_QUERIES = 3
MISSING_WORD = "zqxjvkbenchprobe"


class BenchError(Exception):
    """The benchmark cannot run (bad store path, missing corpus data, ...)."""


@dataclass
class BenchOptions:
    """What to measure. ``store``/``home`` pick an existing store; else a corpus is built."""

    store: Path | None = None
    home: Path | None = None
    sessions: int | None = None
    seed: int = 7
    queries: int = 200
    peers: bool = True
    peer_queries: int = 20
    peer_timeout: float = 300.0
    keep: bool = False
    workdir: Path | None = None
    sgd_path: Path | None = None
    sgd: bool = True  # False: build the corpus from pip-installable data only (chitchat + demo)
    stores: tuple[str, ...] = ALL_KINDS
    pi_store: Path | None = None  # an existing Pi session dir
    pi: bool = False  # build the corpus as Pi JSONL files
    mixed: bool = False  # build half the corpus as PraisonAI JSON, half as Pi JSONL
    agent: str | None = None  # a coding agent (AGENT_NAMES): the corpus as its files
    agent_store: Path | None = None  # an existing dir of that agent's files
    big_message: bool = True  # the one-message file and the big show
    big_message_mb: float = 50.0
    show_message_mb: float = 8.0
    contention: bool = True  # writers and readers in parallel processes
    busy: bool = False  # the known-item queries asked again with every core kept busy
    builds: int = 1  # cold builds of each of our indexes (with and without the vault): the median
    write_messages: int = 100  # add_message calls per writer process
    heavy_timeout: float = 120.0  # seconds for each of those runs (then FAIL)

    @property
    def format(self) -> str:
        """``json``, ``pi`` or ``mixed``: how the measured sessions are stored."""
        if self.pi or self.pi_store is not None:
            return "pi"
        if self.agent is not None:
            return self.agent
        return "mixed" if self.mixed else "json"
