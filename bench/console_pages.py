"""Server time per console page (p50/p95) on an imported LoCoMo dev store.

    python bench/console_pages.py --data PATH/locomo-dev.json [--data-dir DIR] [--rounds 20]

Imports the LoCoMo file into ``--data-dir`` (a temporary folder when not given; an existing
import is reused, nothing stored twice), starts a real ``memstrata serve`` on loopback with an
API key, logs in to the console and asks for every page of every tenant ``--rounds`` times: the
tenants, the status, each tenant's overview, its hottest scene, atoms (first page, and filtered
by type), an atom, messages, a message, a search and a recall preview. Server time is the page's
``Server-Timing`` header (what the console took to make it, without the network or the client);
the same run's stylesheet, served by the console from the package, is the baseline. The target
is every page under 200 ms.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _serve import server_env, serving

KEY = "bench-console-key-0123"
TARGET_MS = 200.0


def cli(*args: str, env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-m", "memstrata", *args], env=env, check=True, stdout=subprocess.DEVNULL)


def server_ms(reply: httpx.Response) -> float:
    reply.raise_for_status()
    found = re.search(r"app;dur=([0-9.]+)", reply.headers.get("server-timing", ""))
    if not found:
        raise SystemExit(f"{reply.url}: no Server-Timing header")
    return float(found.group(1))


def first(pattern: str, html: str, what: str) -> str:
    found = re.search(pattern, html)
    if not found:
        raise SystemExit(f"no {what} found on the page")
    return found.group(1)


def pages(client: httpx.Client) -> dict[str, str]:
    """Every page kind, for every tenant the console lists (one URL per kind and tenant)."""
    urls = {"tenants": "/ui/", "status": "/ui/status"}
    users = sorted(set(re.findall(r'href="/ui/t/([^"/?]+)"', client.get("/ui/").text)))
    for user in users:
        base = f"/ui/t/{user}"
        overview = client.get(base).text
        atoms = client.get(base + "/atoms").text
        messages = client.get(base + "/messages").text
        urls |= {
            f"overview/{user}": base,
            f"scene/{user}": base + "/scenes/" + first(rf'href="{base}/scenes/([^"]+)"', overview, "scene"),
            f"atoms/{user}": base + "/atoms",
            f"atoms?type/{user}": base + "/atoms?type=episodic",
            f"atom/{user}": base + "/atoms/" + first(rf'href="{base}/atoms/([^"?]+)"', atoms, "atom"),
            f"messages/{user}": base + "/messages",
            f"message/{user}": base
            + "/messages/"
            + first(rf'href="{base}/messages/([^"?]+)"', messages, "message"),
            f"search/{user}": base + "/search?q=what+did+they+do+last+weekend",
            f"recall/{user}": base + "/recall?q=What+are+their+hobbies%3F",
        }
    return urls


def report(times: dict[str, list[float]], baseline: list[float]) -> bool:
    """Per page kind: p50/p95 over every tenant and round, and the first round's slowest (each
    page's first view: nothing kept by the console's cache or the shared status yet)."""
    base = statistics.median(baseline)
    print(f"baseline (the stylesheet): p50 {base:.2f} ms")
    print(f"{'page':<12} {'p50 ms':>8} {'p95 ms':>8} {'first max':>10} {'p50/base':>9}")
    by_kind: dict[str, list[float]] = defaultdict(list)
    first: dict[str, float] = defaultdict(float)
    for name, values in times.items():
        by_kind[name.split("/")[0]] += values
        first[name.split("/")[0]] = max(first[name.split("/")[0]], values[0])
    worst = 0.0
    for kind, values in by_kind.items():
        p50, p95 = statistics.median(values), statistics.quantiles(values, n=20)[18]
        worst = max(worst, p95)
        print(f"{kind:<12} {p50:8.1f} {p95:8.1f} {first[kind]:10.1f} {p50 / base:9.0f}")
    print(
        f"slowest p95 {worst:.1f} ms (target < {TARGET_MS:.0f} ms): {'met' if worst < TARGET_MS else 'MISSED'}"
    )
    return worst < TARGET_MS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, type=Path, help="the LoCoMo file (locomo-dev.json)")
    ap.add_argument("--data-dir", type=Path, help="where to import it (default: a temporary folder)")
    ap.add_argument("--rounds", type=int, default=20)
    a = ap.parse_args()
    home = a.data_dir or Path(tempfile.mkdtemp(prefix="memstrata-console-bench-"))
    env = server_env(api_key=KEY)
    started = time.perf_counter()
    cli("import", str(a.data), "--data-dir", str(home), env=env)
    print(f"import: {time.perf_counter() - started:.1f} s into {home}")
    with serving(home, env) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        if client.post("/ui/login", data={"key": KEY, "next": "/ui/"}).status_code != 303:
            raise SystemExit("the console refused the key")
        urls = pages(client)
        times: dict[str, list[float]] = defaultdict(list)
        baseline: list[float] = []
        for _ in range(a.rounds):
            for name, path in urls.items():
                times[name].append(server_ms(client.get(path)))
            baseline.append(server_ms(client.get("/ui/static/console.css")))
    print(f"{len(urls)} pages x {a.rounds} rounds")
    ok = report(times, baseline)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
