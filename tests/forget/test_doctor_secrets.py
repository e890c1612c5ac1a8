"""``session-browser doctor --secrets``: planted AWS keys, a private key, a bearer token and a
``password=`` pair are found in the index, the vault and the team index, by kind and by
session, and none of them is ever printed."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from session_browser.cli import main
from session_browser.core.store import DefaultSessionStore

AWS = "AKIAZ7Q3PLANTEDKEY42"
PRIVATE = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEplantedq2b8Zx0p9QkLw3nV7\n-----END RSA PRIVATE KEY-----"
)
BEARER = "eyPlantedBearerTok3n9Qz"
PASSWORD = "hunter2Planted!x"
PLANTED = [AWS, "MIIEplantedq2b8Zx0p9QkLw3nV7", BEARER, PASSWORD]


def run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.stdout, res.stderr


def test_secrets_are_found_by_kind_and_never_printed(tmp_path: Path, pg_url: str) -> None:
    sessions = tmp_path / "sessions"
    store = DefaultSessionStore(sessions, retention="keep_all")
    store.add_user_message("aws", f"my key is {AWS} in us-east-1")
    store.add_user_message("pem", f"here is the deploy key\n{PRIVATE}\nkeep it safe")
    store.add_user_message("http", f"curl -H 'Authorization: Bearer {BEARER}' the api")
    store.add_user_message("db", f"connect with user=app password={PASSWORD} please")
    store.add_user_message("clean", "the otter census is due friday; mail me at a@b.example")
    args = ["--store", str(sessions)]
    assert run("index", "update", *args)[0] == 0
    store.session_path("aws").unlink()  # only the vault (and the index's kept rows) have it
    assert run("index", "update", *args)[0] == 0
    assert run("push", "--to", pg_url, *args)[0] == 0

    code, out, err = run("doctor", "--secrets", "--index", pg_url, "--json")
    assert code == 0, err
    found = {s["session_id"]: s for s in json.loads(out)["sessions"]}
    assert set(found) == {"aws", "pem", "http", "db"}
    assert found["aws"]["kinds"] == {"aws_access_key": 1}
    assert "private_key" in found["pem"]["kinds"]
    assert found["http"]["kinds"] == {"bearer_token": 1}
    assert found["db"]["kinds"] == {"secret": 1}
    assert set(found["pem"]["where"]) == {"index", "vault", "team index"}
    assert "vault" in found["aws"]["where"]

    code, text, err = run("doctor", "--secrets", "--index", pg_url)
    assert code == 0 and "4 session(s) hold likely secrets" in text
    assert "aws: aws_access_key x1" in text
    for secret in PLANTED:
        assert secret not in out + text + err, secret

    code, _out, err = run("doctor", "--index", pg_url)
    assert code == 1 and err.strip() == "session-browser: --index goes with --secrets"
