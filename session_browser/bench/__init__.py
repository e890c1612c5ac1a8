"""The benchmark: build speed, freshness, latency and known-item quality of every store.

``session-browser bench`` (or ``python -m session_browser.bench``) either builds a corpus of
real conversations into a temporary PraisonAI home
(:func:`session_browser.bench.corpus.build_corpus`) or copies an existing store, generates
known-item queries from it (:func:`session_browser.bench.queries.make_queries`), and measures,
side by side:

- ``ours``: :class:`session_browser.core.index.SqliteSessionStore` (the FTS5 index);
- ``scan``: :class:`session_browser.core.store.DefaultSessionStore` (a full scan per query);
- ``praisonai-json`` and ``praisonai-sqlite``: PraisonAI's own ``DefaultSessionStore`` and
  ``SqliteSessionStore``, when ``praisonaiagents`` is installed.

Pi stores (``--store pi:DIR``, or ``--pi`` to build the corpus as Pi JSONL files) are measured
with ``pi`` (:func:`session_browser.core.sources.pi.indexed.pi_index_store`) and ``pi-scan``
(:class:`session_browser.core.sources.pi.PiStore`); PraisonAI's stores and our JSON stores do not
read Pi files. ``--mixed`` writes half the corpus as PraisonAI JSON and half as Pi JSONL and
measures ``group``: both opened as one :class:`session_browser.core.multi.StoreGroup`
(:func:`session_browser.core.stores.open_stores`), which ranks the hits of both together.

Pi corpus: every session of the JSON corpus becomes ``<root>/--proj--/<id>.jsonl``
(:func:`session_browser.core.sources.pi_jsonl`, ``cwd=/proj``): the same user and assistant turns,
archived turns before a ``compaction`` entry, spilled turns included; a corrupt JSON file is
copied as it is (no session header: the reader skips it). The queries are those of the JSON
corpus (same seed, same method), and their relevant sets are recomputed on the Pi text read
back (:func:`session_browser.core.sources.read_pi_session`): Pi has no lineage chains, so only
the chain parts that hold the words stay relevant. An existing Pi store is read back the same
way and its queries generated from that read-back.

Every store works on its own copy of the session dir inside a private work dir, so nothing
touches the store being measured (PraisonAI's stores create ``.lock`` files beside sessions
and move corrupt files aside, and the update phase changes sessions). Each phase of each store
runs in a fresh interpreter (``python -m session_browser.bench --phase ...``), so its peak RSS
and timings are its own. PraisonAI's slow parts are capped: a phase that runs past
``peer_timeout`` seconds is stopped (its index build rate is then extrapolated from the rows it
wrote), and PraisonAI's stores answer only ``peer_queries`` of the queries.

Beside the stores, and independent of the corpus (each skippable): a session holding one
message of ``"ab ab ab ..."`` (``big_message_mb``, 50 MB) answers ``search``, ``recent`` and
``show`` in one fresh process (peak RSS against 4x the file size), ``show`` of an 8 MB
message is timed (under 2 s), and 1, 4 and 8 writer processes each ``add_message``
``write_messages`` times into 4 sessions while 2 processes search (writes/s, p95 write latency,
and every message counted back from the files: none lost, none duplicated). Our index is also
built and queried in one process, whose peak RSS must stay under 300 MB.

Errors and empty answers are counted apart and never timed; a target measured on answers the
store did not give fails, and the text report shows them.

Metrics (known-item search, ``limit=10``): a query's rank is the position of the first hit
whose session id is in the query's relevant set. Rank@1 is the share of queries whose top hit
is relevant, Recall@k the share with a relevant hit in the top k, MRR the mean of 1/rank (0
when no relevant hit is in the top 10). Latencies are warm (the store open, a few queries run
first); percentiles are nearest-rank.

Modules, each importing only those above it: ``sessions`` (session files), ``data`` (source
conversations), ``corpus`` (the built store), ``queries`` (known-item queries), ``config``
(store kinds, options), ``metrics``, ``stores`` (opening and driving every kind), ``runner``
(a phase in a fresh process), ``heavy`` (the one-message file, parallel writers), ``phases``,
``layout`` (the sessions measured), ``targets``, ``report``, ``harness``; ``app`` is
``session-browser bench-app``.

``session-browser bench --questions`` measures recall by gist instead
(:mod:`session_browser.bench.paraphrase`): 200 questions written in other words than their
sessions (``questions.jsonl``), asked of our search, a plain session-level BM25 reference, the
lexical-recall experiment (:mod:`session_browser.bench.lexical_recall`) and that experiment gated
behind today's search.
"""
