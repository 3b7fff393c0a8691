"""A real PostgreSQL for the tests: Debian's server binaries (scripts/setup.sh
installs the `postgresql` package), a cluster in a temporary folder on a free loopback port,
started for the test session and stopped at its end. As root the server runs as the
`postgres` user (runuser): PostgreSQL refuses to run as root.

Host connections need the password (scram), so a wrong password is refused for real; each
test gets its own database, copied from a template in milliseconds.

    postgres        session: the running server (PgServer)
    pg_url          a fresh, empty database's URL
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

PASSWORD = "skycity-test"


def pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[4]))
    if not found:
        pytest.fail(
            "PostgreSQL's server is not installed (/usr/lib/postgresql/*/bin/initdb): "
            "run scripts/setup.sh (it installs Debian's postgresql package)"
        )
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PgServer:
    bin: Path
    data: Path
    port: int
    as_user: list[str]

    def url(self, db: str = "postgres", password: str = PASSWORD, user: str = "postgres") -> str:
        return f"postgresql://{user}:{password}@127.0.0.1:{self.port}/{db}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(sql)

    def new_db(self, template: str | None = None) -> str:
        name = "t_" + uuid.uuid4().hex[:12]
        self.admin(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return name

    def ctl(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*self.as_user, str(self.bin / "pg_ctl"), "-D", str(self.data), *args],
            capture_output=True,
            text=True,
            timeout=60,
        )


def start_server() -> PgServer:
    binp = pg_bin()
    root = Path(tempfile.mkdtemp(prefix="skb-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    data = root / "data"
    pw = root / "pw"
    pw.write_text(PASSWORD + "\n")
    if as_user:
        shutil.chown(pw, "postgres", "postgres")
    r = subprocess.run(
        [
            *as_user,
            str(binp / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            f"--pwfile={pw}",
            "--no-sync",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if r.returncode:
        raise RuntimeError(f"initdb failed: {r.stderr.strip()[-500:]}")
    for _ in range(5):
        port = _free_port()
        srv = PgServer(binp, data, port, as_user)
        # a test server: durability off (fsync), small, loopback only, its socket in its own folder
        opts = (
            f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
            f"-c full_page_writes=off -c max_connections=60 -c shared_buffers=32MB"
        )
        r = srv.ctl("-o", opts, "-w", "-t", "60", "-l", str(root / "server.log"), "start")
        if r.returncode == 0:
            return srv
    raise RuntimeError(f"PostgreSQL did not start: {(root / 'server.log').read_text()[-800:]}")


def stop_server(srv: PgServer) -> None:
    srv.ctl("-m", "immediate", "stop")
    shutil.rmtree(srv.data.parent, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres():
    srv = start_server()
    try:
        yield srv
    finally:
        stop_server(srv)


@pytest.fixture()
def pg_url(postgres) -> str:
    return postgres.url(postgres.new_db())
