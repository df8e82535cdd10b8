"""The image's smoke test: one container on loopback, its data in a volume.

    python -m tests.container.smoke --image localhost/memstrata:ci

It starts ``memstrata serve`` in the container (the time to a healthy ``/v1/health`` is printed),
runs the image's own healthcheck, captures a conversation and waits for the background pipeline
to extract it (no pipeline call from here; serve's
worker process runs it), searches and recalls it, makes a scoped key and
checks what it reaches, then sends SIGTERM right after a capture: the server must drain and exit
0, and a container started again on the same volume must hold everything, extracted.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import time
from typing import Any

from tests.container.harness import (
    Api,
    check,
    exit_code,
    free_port,
    inspect,
    no_tracebacks,
    podman,
    say,
    step,
    wait_for,
)

CONVERSATION = [
    {"role": "user", "name": "Maya", "content": "I moved to Lisbon last week."},
    {"role": "assistant", "content": "Welcome to Lisbon!"},
    {"role": "user", "name": "Maya", "content": "My sister Ana is visiting me next weekend."},
    {"role": "assistant", "content": "Have a lovely time with Ana."},
]
LATE = [{"role": "user", "name": "Maya", "content": "I am allergic to peanuts, remember that."}]
# Short idle timer: a captured session is extracted a second after its last message.
SETTINGS = {"MEMSTRATA_PIPELINE__L1_IDLE_TIMEOUT_SECONDS": "1"}


class Container:
    """``memstrata serve`` in a container on the host's loopback, its data directory a volume."""

    def __init__(self, image: str, name: str, volume: str, port: int, key: str) -> None:
        self.image, self.name, self.volume, self.port, self.key = image, name, volume, port, key
        self.api = Api(f"http://127.0.0.1:{port}", key)

    def start(self) -> float:
        """Run it; seconds from ``podman run`` to a healthy ``/v1/health``."""
        podman("rm", "--force", "--ignore", self.name)
        env = {
            "MEMSTRATA_API_KEY": self.key,
            "MEMSTRATA_SERVER__HOST": "127.0.0.1",  # the host's network: loopback only
            "MEMSTRATA_SERVER__PORT": str(self.port),
            **SETTINGS,
        }
        t0 = time.monotonic()
        podman(
            "run", "--detach", "--name", self.name, "--network=host", "--volume", f"{self.volume}:/data",
            *[a for k, v in env.items() for a in ("--env", f"{k}={v}")],
            self.image, "serve",
        )  # fmt: skip
        wait_for("a healthy /v1/health", self.api.healthy, timeout=120, every=0.05)
        return time.monotonic() - t0

    def stop(self) -> tuple[int, float]:
        """SIGTERM; its exit code and the seconds it took to exit."""
        t0 = time.monotonic()
        podman("kill", "--signal", "TERM", self.name)
        code = exit_code(self.name, timeout=60)
        return code, time.monotonic() - t0


def extracted(api: Api) -> list[dict[str, Any]] | None:
    atoms: list[dict[str, Any]] = api.get("/v1/atoms?user_id=maya&limit=1000")
    status = api.get("/v1/status")
    lag = sum(s["lag"] for s in status["sessions"])
    # Atoms are searchable by meaning once the embedding backlog has their vectors.
    return atoms if atoms and lag == 0 and status["unembedded"] == 0 else None


def capture_and_extract(api: Api) -> None:
    with step("capture a conversation; the background pipeline extracts it"):
        stored = api.post(
            "/v1/capture", {"user_id": "maya", "session_key": "chat-1", "messages": CONVERSATION}
        )
        check(len(stored["stored"]) == 4, f"capture stored {stored}")
        atoms = wait_for("atoms extracted from chat-1", lambda: extracted(api), timeout=90)
        say(f"  {len(atoms)} atoms: {sorted(a['content'] for a in atoms)}")


def search_and_recall(api: Api) -> None:
    with step("search and recall"):
        found = api.post("/v1/search", {"query": "where does Maya live?", "user_id": "maya"})
        # An atom and the message it was drawn from are one finding: search lists the better of the
        # two (which one depends on the atom's wording, and so on today's date in it).
        said = CONVERSATION[0]["content"]
        lisbon = [
            h
            for h in found["hits"]
            if h["content"] == said or (h["layer"] == "L1" and "Lisbon" in h["content"])
        ]
        check(bool(lisbon), f"search: nothing about Lisbon: {found}")
        hit = lisbon[0]
        say(
            f"  search ({found['strategy']}): #{hit['rank']} of {len(found['hits'])}, {hit['layer']} {hit['score']:.2f} {hit['content']!r}"
        )
        context = api.post("/v1/recall", {"query": "Who is coming to visit Maya?", "user_id": "maya"})
        check("Ana" in context["prepend_context"], f"recall: {context}")
        lines = [line for line in context["prepend_context"].splitlines() if "Ana" in line]
        say(f"  recall: {lines[0].strip()!r}")


def scoped_key(api: Api) -> None:
    with step("a scoped key reaches its tenant only"):
        api.post("/v1/capture", {"user_id": "ana", "session_key": "a-1", "messages": CONVERSATION[:1]})
        issued = api.post("/v1/keys", {"tenants": [["maya", None]], "label": "smoke"})
        maya = api.with_key(issued["secret"])
        hits = maya.post("/v1/search", {"query": "Lisbon"})["hits"]  # no tenant named: the key's
        check(bool(hits) and all(h["content"] for h in hits), f"scoped search: {hits}")
        maya.post("/v1/search", {"query": "Lisbon", "user_id": "ana"}, expect=403)
        maya.get("/v1/status", expect=403)
        api.with_key(None).get("/v1/status", expect=401)
        api.with_key("msk_wrong_key").post("/v1/search", {"query": "Lisbon"}, expect=401)
        say(f"  key {issued['key']['id']}: maya's search 200, ana's 403, status 403; no key 401")


def sigterm_and_restart(box: Container) -> None:
    with step("SIGTERM right after a capture: a clean exit, nothing lost"):
        box.api.post("/v1/capture", {"user_id": "maya", "session_key": "chat-2", "messages": LATE})
        code, took = box.stop()
        check(code == 0, f"exit code {code}")
        no_tracebacks(box.name)
        say(f"  exit {code} after {took:.1f} s")
        again = box.start()
        say(f"  started again on the same volume: healthy after {again:.1f} s")
        atoms = wait_for("chat-2 extracted", lambda: extracted(box.api), timeout=60)
        check(any("peanuts" in a["content"] for a in atoms), f"chat-2 not extracted: {atoms}")
        messages = box.api.get("/v1/messages?user_id=maya&limit=1000")
        check(len(messages) == 5, f"{len(messages)} messages, expected 5")
        say(f"  {len(messages)} messages and {len(atoms)} atoms for maya after the restart")
        code, took = box.stop()
        check(code == 0, f"exit code {code} on the second SIGTERM")
        no_tracebacks(box.name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--image", required=True)
    image = parser.parse_args().image
    tag = f"memstrata-smoke-{os.getpid()}"
    box = Container(image, tag, tag, free_port(), secrets.token_hex(24))
    try:
        with step(f"start {image} on 127.0.0.1:{box.port}"):
            say(f"  healthy /v1/health after {box.start():.1f} s")
            check(inspect(box.name, "{{.Config.User}}") == "memstrata", "the server runs as root")
            podman("healthcheck", "run", box.name)  # exit 0: healthy
            say("  the image's HEALTHCHECK: healthy; user memstrata")
            processes = podman("top", box.name, "args").splitlines()[1:]
            worker = [p for p in processes if " worker " in f"{p} "]
            check(len(worker) == 1, f"serve started no worker (it runs the pipeline): {processes}")
            say(f"  its worker: {worker[0].strip()}")
        capture_and_extract(box.api)
        search_and_recall(box.api)
        scoped_key(box.api)
        sigterm_and_restart(box)
        say("smoke test passed")
    finally:
        podman("rm", "--force", "--ignore", "--volumes", "--time", "0", box.name, check_rc=False)
        podman("volume", "rm", "--force", box.volume, check_rc=False)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # clean up when CI stops the job
    main()
