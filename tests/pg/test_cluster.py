"""The throwaway PostgreSQL the team-index tests use."""

from __future__ import annotations

import psycopg


def test_the_cluster_answers_on_its_socket_and_not_as_root(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT current_database(), inet_server_port()").fetchone()
        assert row is not None and row[0].startswith("t") and row[1] is None  # Unix socket only
        owner = conn.execute("SELECT pg_read_file('postmaster.pid') IS NOT NULL").fetchone()
        assert owner == (True,)
