"""Search, engine-neutral and pure: the one relevance procedure and the math under it.

Modules (each imports only those above it, and no engine, vault or store)
    :mod:`.results` what a reconcile or a search reports; :mod:`.rank` the ranking math over
    plain data (BM25 per message, boosts, common words, coverage, recency, ordering, the
    lineage fold key); :mod:`.candidates` the bounded candidate plan and the candidate rows
    scored; :mod:`.rows` a session turned into index rows (what every engine stores);
    :mod:`.hidden` a session's hidden parts as rows, and the text a hit's snippet is cut from;
    :mod:`.fuzzy` edit distance for the typo pass; :mod:`.pick` the filter-only listing, hits
    and listed sessions built from plain data, and the corrected query; :mod:`.engine` the
    ``Engine`` protocol and the named results passed between it and the procedure;
    :mod:`.procedure` the relevance procedure (nothing searchable, score, refine, typo pass,
    order and fold lineage, build hits); :mod:`.searching` the search API every engine's
    store offers around it.
"""
