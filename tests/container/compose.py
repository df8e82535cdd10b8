"""The compose deployment's test: ``compose.yaml`` as shipped, on PostgreSQL with pgvector, driven
by podman-compose.

    python -m tests.container.compose --image localhost/memstrata:ci \
        --postgres-image localhost/memstrata-postgres:ci

The servers run ``serve --workers 0`` and two ``memstrata worker`` containers run the pipeline.
Captures for several tenants and sessions go to both servers in turn; while the workers are still
extracting them, one worker is SIGKILLed from the host (a crash, not a stop) and its restart
policy brings it back. Then every session must be extracted, each window
once (no atom twice, no scene twice), every message kept, and both servers must answer searches.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tests.container.harness import (
    COMPOSE,
    PODMAN,
    Api,
    Failed,
    check,
    free_port,
    inspect,
    logs,
    no_tracebacks,
    podman,
    run,
    say,
    step,
    turn,
    wait_for,
)

REPO = Path(__file__).resolve().parents[2]
USERS = ["ana", "ben", "chen", "dora"]
SESSIONS = ["s0", "s1", "s2"]
ROUNDS = 5
MEMSTRATA = [("server-1", 1), ("server-2", 1), ("worker", 1), ("worker", 2)]  # compose.yaml's
# Test-only settings over compose.yaml's: extraction every 3 turns, quick timers and retries, so
# the run is short; everything else is the file as shipped.
OVERRIDE = """
x-pace: &pace
  MEMSTRATA_PIPELINE__EVERY_N_CONVERSATIONS: "3"
  MEMSTRATA_PIPELINE__WARM_UP: "false"
  MEMSTRATA_PIPELINE__L1_IDLE_TIMEOUT_SECONDS: "0.5"
  MEMSTRATA_PIPELINE__RETRY_DELAY_SECONDS: "0.5"
  MEMSTRATA_PIPELINE__L2_DELAY_AFTER_L1_SECONDS: "0.5"
  MEMSTRATA_PIPELINE__L2_MIN_INTERVAL_SECONDS: "1"
  MEMSTRATA_PERSONA__TRIGGER_EVERY_N: "5"
services:
  server-1: {environment: *pace}
  server-2: {environment: *pace}
  worker: {environment: *pace}
"""


class Deployment:
    """One podman-compose project of compose.yaml (and the test's override)."""

    def __init__(self, image: str, postgres_image: str, workdir: Path) -> None:
        self.project = f"memstrata-ci-{os.getpid()}"
        self.ports = free_port(), free_port()
        override = workdir / "compose.override.yaml"
        override.write_text(OVERRIDE)
        self.files = ["-f", str(REPO / "compose.yaml"), "-f", str(override)]
        self.env = {
            **os.environ,
            "MEMSTRATA_IMAGE": image,
            "POSTGRES_IMAGE": postgres_image,
            "MEMSTRATA_API_KEY": secrets.token_hex(24),
            "POSTGRES_PASSWORD": secrets.token_hex(16),
            "MEMSTRATA_PORT_1": str(self.ports[0]),
            "MEMSTRATA_PORT_2": str(self.ports[1]),
        }
        key = self.env["MEMSTRATA_API_KEY"]
        self.servers = [Api(f"http://127.0.0.1:{p}", key) for p in self.ports]

    def compose(self, *args: str) -> str:
        return run([COMPOSE, "-p", self.project, *self.files, *args], env=self.env, timeout=300)

    def container(self, service: str, number: int = 1) -> str:
        return f"{self.project}_{service}_{number}"

    def up(self) -> None:
        self.compose("up", "-d", "--no-build", "db")
        wait_for(
            "PostgreSQL healthy", lambda: podman("healthcheck", "run", self.container("db")) == "", 120, 1
        )
        self.compose("up", "-d", "--no-build")

    def down(self) -> None:
        """Remove the project: containers, network, volumes (the containers' anonymous /data
        volumes too, which podman-compose's ``down -v`` leaves)."""
        label = f"label=io.podman.compose.project={self.project}"
        ids = podman("ps", "--all", "--quiet", "--filter", label, check_rc=False).split()
        mounts = '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}'
        volumes = podman("inspect", "--format", mounts, *ids, check_rc=False).split() if ids else []
        try:
            self.compose("down", "-v", "-t", "30")
        finally:
            podman("volume", "rm", "--force", *volumes, f"{self.project}_pgdata", check_rc=False)
            podman("network", "rm", "--force", f"{self.project}_default", check_rc=False)

    def crash(self, name: str) -> int:
        """SIGKILL a container's main process from the host (as a crash would); its pid."""
        pid = int(inspect(name, "{{.State.Pid}}"))
        os.kill(pid, signal.SIGKILL)
        return pid


def capture(servers: list[Api]) -> int:
    """Every turn of every session, round by round, to the two servers in turn; messages sent."""
    n = 0
    for r in range(ROUNDS):
        for user in USERS:
            for session in SESSIONS:
                body = {"user_id": user, "session_key": session, "messages": turn(user, session, r)}
                servers[n % 2].post("/v1/capture", body)
                n += 1
    return n * 2


def idle(api: Api) -> dict[str, Any]:
    """The status once every session is extracted and every tenant's L2/L3 is done; else
    ``Failed`` naming what is not (``wait_for`` reports the last one at its deadline)."""
    status: dict[str, Any] = api.get("/v1/status")
    sessions = [s for s in status["sessions"] if s["tenant"]["user_id"] in USERS]
    check(len(sessions) == len(USERS) * len(SESSIONS), f"{len(sessions)} sessions known")
    busy = [s for s in sessions if s["lag"] or s["attempts"]]
    check(not busy, f"sessions not done: {busy[:3]}")
    for t in status["tenants"]:
        user = t["tenant"]["user_id"]
        atoms = api.get(f"/v1/atoms?user_id={user}&include_superseded=true&limit=1000")
        last = max((a["seq"] for a in atoms), default=0)
        check(t["l2_cursor"] >= last and not t["l2_attempts"], f"{user}: L2 at {t['l2_cursor']} of {last}")
        check(not t["l3_pending"] and not t["l3_attempts"], f"{user}: L3 pending")
    return status


def check_outcome(api: Api, status: dict[str, Any]) -> dict[str, int]:
    """No lost message, every session's cursor at its last message, no atom or scene twice."""
    cursors = {(s["tenant"]["user_id"], s["session_key"]): s["cursor"] for s in status["sessions"]}
    totals: Counter[str] = Counter()
    for user in USERS:
        messages = api.get(f"/v1/messages?user_id={user}&limit=1000")
        check(len(messages) == len(SESSIONS) * ROUNDS * 2, f"{user}: {len(messages)} messages")
        for session in SESSIONS:
            last = max(m["seq"] for m in messages if m["session_key"] == session)
            check(
                cursors[(user, session)] == last,
                f"{user}/{session}: cursor {cursors[(user, session)]} < {last}",
            )
        atoms = api.get(f"/v1/atoms?user_id={user}&include_superseded=true&limit=1000")
        twice = [
            k
            for k, n in Counter((a["content"], tuple(a["source_message_ids"])) for a in atoms).items()
            if n > 1
        ]
        check(not twice, f"{user}: atoms made twice: {twice[:3]}")
        scenes = [s["name"] for s in api.get(f"/v1/scenes?user_id={user}")]
        check(bool(scenes) and len(scenes) == len(set(scenes)), f"{user}: scenes {scenes}")
        check(api.get(f"/v1/persona?user_id={user}") is not None, f"{user}: no persona")
        totals.update(messages=len(messages), atoms=len(atoms), scenes=len(scenes))
    return dict(totals)


def lag(api: Api) -> int:
    """Captured messages not yet extracted, all sessions."""
    return sum(s["lag"] for s in api.get("/v1/status")["sessions"])


def kill_mid_run(deployment: Deployment, captured: int) -> None:
    """Crash worker 1 from the host once the workers have extracted part of the captures, not
    all; its restart policy brings it back."""
    name = deployment.container("worker", 1)

    def under_way() -> int | None:
        left = lag(deployment.servers[0])
        check(left > 0, "the workers finished before the kill: it would test nothing")
        return left if left < captured else None

    left = wait_for("extraction under way", under_way, timeout=120, every=0.05)
    pid = deployment.crash(name)
    say(f"  SIGKILL {name} (pid {pid}) with {left} of {captured} messages not yet extracted")
    wait_for(
        f"{name} restarted by its policy",
        lambda: inspect(name, "{{.State.Status}} {{.RestartCount}}").split() == ["running", "1"],
        timeout=60,
    )
    wait_for(f"{name} running again", lambda: logs(name).count("memstrata worker on") == 2, timeout=60)
    say(f"  {name} restarted by its policy (restart count 1, pid {inspect(name, '{{.State.Pid}}')})")


def roles(deployment: Deployment) -> None:
    """The servers run no pipeline process; each worker container runs ``memstrata worker``."""
    for name in MEMSTRATA:
        commands = podman("top", deployment.container(*name), "args").splitlines()[1:]
        workers = [c for c in commands if " worker" in c]
        check(bool(workers) == (name[0] == "worker"), f"{name}: processes {commands}")
    say("  servers: no worker process; workers: `memstrata worker`")


def totals(api: Api) -> tuple[int, int]:
    status = api.get("/v1/status")
    return status["messages"], status["atoms"]


def backup_and_restore(deployment: Deployment, where: Path) -> None:
    """docs/deploy.md's backup and restore, as written there: pg_dump from the db container to a
    file, a capture made after it, and pg_restore with the memstrata containers stopped, which
    must bring back what the dump held and nothing else."""
    db, dump = deployment.container("db"), where / "memstrata.dump"
    before = totals(deployment.servers[0])
    with dump.open("wb") as out:
        subprocess.run(
            [PODMAN, "exec", db, "pg_dump", "-U", "memstrata", "-Fc", "memstrata"], stdout=out, check=True
        )
    late = {"user_id": "ana", "session_key": "late", "messages": turn("ana", "late", 0)}
    deployment.servers[0].post("/v1/capture", late)
    check(totals(deployment.servers[0])[0] == before[0] + 2, "the late capture was not stored")
    deployment.compose("stop", "-t", "30", "server-1", "server-2", "worker")
    with dump.open("rb") as source:
        restore = ["pg_restore", "-U", "memstrata", "-d", "memstrata", "--clean", "--if-exists"]
        done = subprocess.run([PODMAN, "exec", "-i", db, *restore], stdin=source, capture_output=True)
    check(done.returncode == 0, f"pg_restore: exit {done.returncode}: {done.stderr.decode()[-3000:]}")
    deployment.compose("start", "server-1", "server-2", "worker")
    for api in deployment.servers:
        wait_for(f"{api.base} healthy", api.healthy, timeout=180, every=0.1)
    after = totals(deployment.servers[1])
    check(after == before, f"restored {after} (messages, atoms), dumped {before}")
    say(
        f"  dump {dump.stat().st_size} bytes; restored {after[0]} messages and {after[1]} atoms (the late capture gone)"
    )


def exercise(deployment: Deployment, where: Path) -> None:
    with step("start compose.yaml: PostgreSQL, then two servers (--workers 0) and two workers"):
        t0 = time.monotonic()
        deployment.up()
        for api in deployment.servers:
            wait_for(f"{api.base} healthy", api.healthy, timeout=180, every=0.1)
        say(f"  both servers healthy {time.monotonic() - t0:.1f} s after `up`")
        roles(deployment)
    with step(f"capture {len(USERS)} users x {len(SESSIONS)} sessions x {ROUNDS} turns through both servers"):
        captured = capture(deployment.servers)
        say(f"  {captured} messages captured")
    with step("crash a worker mid-run"):
        kill_mid_run(deployment, captured)
    with step("every capture extracted once"):
        status = wait_for("the pipeline idle", lambda: idle(deployment.servers[0]), timeout=300, every=1)
        totals = check_outcome(deployment.servers[1], status)
        say(
            f"  {totals['messages']} messages, {totals['atoms']} atoms (none twice), "
            f"{totals['scenes']} scenes (none twice), {len(USERS)} personas"
        )
        for api in deployment.servers:
            hits = api.post("/v1/search", {"query": "violin teacher", "user_id": "ana"})["hits"]
            check(any("violin" in h["content"] for h in hits), f"{api.base}: search {hits}")
        say("  both servers find ana's violin teacher")
    with step("back up and restore (docs/deploy.md)"):
        backup_and_restore(deployment, where)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--image", required=True)
    parser.add_argument("--postgres-image", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        deployment = Deployment(args.image, args.postgres_image, Path(workdir))
        try:
            exercise(deployment, Path(workdir))
            with step("stop the deployment (SIGTERM): clean exits"):
                for name in MEMSTRATA:
                    no_tracebacks(deployment.container(*name))
                deployment.compose("stop", "-t", "30")
                codes = {
                    "_".join(map(str, name)): inspect(deployment.container(*name), "{{.State.ExitCode}}")
                    for name in MEMSTRATA
                }
                check(set(codes.values()) == {"0"}, f"exit codes {codes}")
                say(f"  exit codes {codes}")
            say("compose test passed")
        except Failed:
            for name in [*MEMSTRATA, ("db", 1)]:
                print(f"--- {name} log (tail)\n" + logs(deployment.container(*name))[-4000:])
            raise
        finally:
            deployment.down()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    main()
