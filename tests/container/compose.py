"""The compose deployment's test: ``compose.yaml`` as shipped, on PostgreSQL with pgvector, driven
by podman-compose.

    python -m tests.container.compose --image localhost/memstrata:ci \
        --postgres-image localhost/memstrata-postgres:ci

Captures for several tenants and sessions go to both servers in turn; while the pipeline is
still working through them, the process running it is SIGKILLed from the host (a crash, not a
stop) and its restart policy brings it back. Then every session must be extracted, each window
once (no atom twice, no scene twice), every message kept, and both servers must answer searches.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tests.container.harness import (
    COMPOSE,
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

    def container(self, service: str) -> str:
        return f"{self.project}_{service}_1"

    def up(self) -> None:
        self.compose("up", "-d", "--no-build", "db")
        wait_for(
            "PostgreSQL healthy", lambda: podman("healthcheck", "run", self.container("db")) == "", 120, 1
        )
        self.compose("up", "-d", "--no-build")

    def down(self) -> None:
        try:
            self.compose("down", "-t", "30")
        finally:
            podman("volume", "rm", "--force", f"{self.project}_pgdata", check_rc=False)
            podman("network", "rm", "--force", f"{self.project}_default", check_rc=False)

    def crash(self, service: str) -> int:
        """SIGKILL the service's main process from the host (as a crash would); its old pid."""
        name = self.container(service)
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


def kill_mid_run(deployment: Deployment, service: str) -> None:
    """Crash ``service`` while work is pending; wait for its restart policy to bring it back."""
    name = deployment.container(service)
    lag = sum(s["lag"] for s in deployment.servers[0].get("/v1/status")["sessions"])
    pid = deployment.crash(service)
    say(f"  SIGKILL {name} (pid {pid}) with {lag} messages not yet extracted")
    check(lag > 0, "the pipeline had already finished: the kill tested nothing")
    restarted = wait_for(
        f"{name} restarted by its policy",
        lambda: inspect(name, "{{.State.Status}} {{.RestartCount}}").split() == ["running", "1"],
        timeout=60,
    )
    check(restarted, "no restart")
    if service.startswith("server"):
        index = int(service.rsplit("-", 1)[1]) - 1
        wait_for(f"{name} healthy again", deployment.servers[index].healthy, timeout=120, every=0.1)
    say(f"  {name} restarted by its policy (restart count 1)")


def exercise(deployment: Deployment, pipeline: str) -> None:
    with step(
        "start compose.yaml: PostgreSQL, then two servers" + (", a worker" if pipeline == "worker" else "")
    ):
        t0 = time.monotonic()
        deployment.up()
        for api in deployment.servers:
            wait_for(f"{api.base} healthy", api.healthy, timeout=180, every=0.1)
        say(f"  both servers healthy {time.monotonic() - t0:.1f} s after `up`")
    with step(f"capture {len(USERS)} users x {len(SESSIONS)} sessions x {ROUNDS} turns through both servers"):
        say(f"  {capture(deployment.servers)} messages captured")
    with step(f"crash the {pipeline} mid-run"):
        kill_mid_run(deployment, pipeline)
    with step("every capture extracted once"):
        status = wait_for("the pipeline idle", lambda: idle(deployment.servers[0]), timeout=300, every=1)
        totals = check_outcome(deployment.servers[1], status)
        say(
            f"  {totals['messages']} messages, {totals['atoms']} atoms (none twice), {totals['scenes']} scenes (none twice), {len(USERS)} personas"
        )
        for api in deployment.servers:
            hits = api.post("/v1/search", {"query": "violin teacher", "user_id": "ana"})["hits"]
            check(any("violin" in h["content"] for h in hits), f"{api.base}: search {hits}")
        say("  both servers find ana's violin teacher")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--image", required=True)
    parser.add_argument("--postgres-image", required=True)
    parser.add_argument("--pipeline", default="server-2", help="the service to crash: server-2 or worker")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        deployment = Deployment(args.image, args.postgres_image, Path(workdir))
        try:
            exercise(deployment, args.pipeline)
            with step("stop the deployment (SIGTERM): clean exits"):
                for service in ("server-1", "server-2"):
                    no_tracebacks(deployment.container(service))
                deployment.compose("stop", "-t", "30")
                codes = {
                    s: inspect(deployment.container(s), "{{.State.ExitCode}}")
                    for s in ("server-1", "server-2")
                }
                check(set(codes.values()) == {"0"}, f"exit codes {codes}")
                say(f"  exit codes {codes}")
            say("compose test passed")
        except Failed:
            for service in ("server-1", "server-2", "db"):
                print(f"--- {service} log (tail)\n" + logs(deployment.container(service))[-4000:])
            raise
        finally:
            deployment.down()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    main()
