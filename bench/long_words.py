"""One search over a tenant holding one very long word, against the same search over an ordinary
tenant: peak RSS and time, as ratios measured in the same run (issue 48, item 1).

    python bench/long_words.py [--sizes 80000,1000000,20000000] [--cap-gb 4] [--stored-cut]

Every case is a child process on a fresh store (hashing embedder, 384 dimensions: the cost
measured is search's, not a model's) holding the same 200 synthetic messages and one more
exchange: the query asked, and an answer that is "Sure." for the ordinary tenant, and for a long
case a single word of N characters (``AAAA...``) or a base64 blob of a text document (ASCII bytes
never make a "+" or "/": the blob is one word). The answer is indexed with the question before
it, so search finds and judges it, as in the issue's reproduction. The child then runs one
search (layers L0 and L1) and one recall, each measured alone: its peak RSS (``VmHWM`` after
resetting it through ``/proc/self/clear_refs``) and wall time. Ratios are against the ordinary
tenant's case.

By default the long text is stored whole (``capture.max_message_chars`` raised past it), which is
the worst case search can meet (an operator's raised limit, an import); ``--stored-cut`` keeps
the shipped limit (200,000 characters). Each child's address space is capped at its size before
the long text plus ``--cap-gb``: a case that needs more reports "killed at N GB" instead of
taking the machine. The machine these figures come from is shared: read the ratios.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _synthetic import queries, sentences

CHILD = r"""
import json, re, resource, sys, time
from memstrata import Memory
from memstrata.embeddings.hashing import HashingEmbedder

home, text_file, cap, whole, normal, query = sys.argv[1:7]
normal = json.loads(normal)

def status(field):
    return int(re.search(field + r":\s+(\d+) kB", open("/proc/self/status").read()).group(1)) * 1024

def measured(call):
    open("/proc/self/clear_refs", "w").write("5")  # VmHWM restarts from the RSS now
    started = time.perf_counter()
    call()
    return {"seconds": time.perf_counter() - started, "peak_rss": status("VmHWM")}

settings = {"capture": {"max_message_chars": 25_000_000}} if whole == "1" else {}
with Memory.open(home, embedder=HashingEmbedder(384), **settings) as mem:
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(normal)]
    mem.capture(turns, session_key="normal")
    mem.search(query, layers=("L0", "L1")); mem.recall(query)  # loads what any first search loads
    out = {}
    # The answer is found by the question before it (a message is indexed with the turn before):
    # as in the issue's reproduction, search judges it.
    text = open(text_file, encoding="utf-8").read() if text_file else "Sure."
    limit = status("VmSize") + int(float(cap) * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    said = [{"role": "user", "content": query}, {"role": "assistant", "content": text}]
    out["capture"] = measured(lambda: mem.capture(said, session_key="long"))
    del text, said
    out["stored_chars"] = max(len(m.content) for m in mem.messages(session_key="long"))
    out["search"] = measured(lambda: mem.search(query, layers=("L0", "L1")))
    out["recall"] = measured(lambda: mem.recall(query))
    print(json.dumps(out))
"""


def long_text(kind: str, chars: int) -> str:
    if kind == "word":
        return "A" * chars
    words = random.Random(7).choices(["tea", "honey", "morning", "green", "cup", "water"], k=chars // 4 + 1)
    return base64.b64encode(" ".join(words).encode()).decode()[:chars]


def run_case(kind: str, chars: int, cap_gb: float, whole: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="bench-long-words-") as tmp:
        text_file = ""
        if kind != "normal":
            text_file = str(Path(tmp) / "long.txt")
            Path(text_file).write_text(long_text(kind, chars), encoding="utf-8")
        args = [str(Path(tmp) / "data"), text_file, str(cap_gb), "1" if whole else "0"]
        args += [json.dumps(sentences(200)), queries(1)[0]]
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, *args], capture_output=True, text=True, env=env, check=False
        )
    if proc.returncode != 0:
        killed = "MemoryError" in proc.stderr or proc.returncode < 0
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"failed": f"killed at {cap_gb:g} GB over its start" if killed else last}
    return dict(json.loads(proc.stdout.splitlines()[-1]))


def describe(name: str, got: dict[str, object], base: dict[str, object]) -> str:
    if "failed" in got:
        return f"{name:<22} {got['failed']}"
    parts = [f"{name:<22}"]
    if got is not base:
        capture = got["capture"]
        assert isinstance(capture, dict)
        parts.append(f"stored {got['stored_chars']:>10,} chars, capture {capture['seconds']:6.2f} s |")
    for step in ("search", "recall"):
        mine, theirs = got[step], base[step]
        assert isinstance(mine, dict) and isinstance(theirs, dict)
        rss, base_rss = mine["peak_rss"] / 2**20, theirs["peak_rss"] / 2**20
        parts.append(
            f"{step} {mine['seconds'] * 1000:8.1f} ms (x{mine['seconds'] / theirs['seconds']:.1f}) "
            f"peak RSS {rss:7.0f} MB (x{rss / base_rss:.2f})"
        )
    return " ".join(parts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="80000,1000000,20000000", help="characters of the long word")
    ap.add_argument("--cap-gb", type=float, default=4.0, help="address space a case may add, GB")
    ap.add_argument("--stored-cut", action="store_true", help="keep the shipped max_message_chars")
    a = ap.parse_args()
    whole = not a.stored_cut
    base = run_case("normal", 0, a.cap_gb, whole)
    if "failed" in base:
        print(f"the ordinary tenant's case failed: {base['failed']}")
        return 1
    print(describe("ordinary tenant", base, base), flush=True)
    for chars in (int(s) for s in a.sizes.split(",")):
        for kind in ("word", "base64"):
            print(
                describe(f"+ {kind} of {chars:,}", run_case(kind, chars, a.cap_gb, whole), base), flush=True
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
