"""The team-index tests' throwaway PostgreSQL, for the forget tests too."""

from tests.pg.conftest import pg_cluster, pg_url

__all__ = ["pg_cluster", "pg_url"]
