"""The query process's child: ``python -m memstrata.embeddings.query_child MODEL_DIR``.

Loads the shipped model, says it is ready, then answers each frame of texts with their query
vectors (``query_process.py`` draws the protocol) until its stdin closes. Nothing imports this
module, so running it with ``-m`` loads it once.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import numpy as np

from memstrata.embeddings.local import LocalEmbedder
from memstrata.embeddings.query_process import ChildFailed, read_frame, write_frame


def serve(model_dir: Path) -> None:
    # Ctrl-C at a terminal reaches the whole process group; the server decides when this ends
    # (by closing our stdin), so no KeyboardInterrupt trace here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The pipe to the server gets a descriptor of its own and fd 1 becomes stderr, so nothing a
    # library prints can land in the middle of a frame.
    stdin, stdout = 0, os.dup(1)
    os.dup2(2, 1)
    # One core a pass: the server that asks is loaded (``LocalEmbedder.embed_queries``).
    embedder = LocalEmbedder(model_dir, query_halves=False)
    run = embedder.embed_queries
    run(["warm up"])  # loads the weights before the server counts on us
    write_frame(stdout, b"R" + json.dumps({"dimensions": embedder.dimensions}).encode())
    while True:
        try:
            body = read_frame(stdin)
        except ChildFailed:  # stdin closed: the server is done with us
            return
        try:
            texts = json.loads(body)
            reply = b"V" + np.ascontiguousarray(run(texts), dtype=np.float32).tobytes()
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the server, in words
            reply = b"E" + f"{type(exc).__name__}: {exc}".encode()
        write_frame(stdout, reply)


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
