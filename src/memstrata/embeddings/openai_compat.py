"""Embeddings from an OpenAI-compatible ``POST /embeddings`` endpoint (OpenAI, Ollama, vLLM, ...).

Plain sync httpx rather than the SDK: the call is one small JSON request, and the store embeds from
worker threads, where a blocking client is the natural fit.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from memstrata.errors import ConfigError, EmbeddingError
from memstrata.models import Vectors

log = logging.getLogger(__name__)

_PROBE_TEXT = "dimension probe"
_BODY_SNIPPET = 200
# Each input is cut to this many characters: request bodies stay small whatever a record's length,
# and the text stays under the 8k-token input limit of the common embedding models even at one
# character per token (CJK). A record's start says what it is about.
MAX_INPUT_CHARS = 8_000


class OpenAIEmbedder:
    """Embeds through ``{base_url}/embeddings``, ``batch_size`` texts per request; rows L2-normalised.

    ``dimensions`` is sent to the endpoint when configured and every returned vector must have that
    length. When it is not configured, the length of the first reply is learnt and enforced from then
    on; reading ``dimensions`` (or ``name``) before any embed then sends one probe request.
    Each text is sent cut to ``MAX_INPUT_CHARS`` characters.
    Timeouts, connection failures, HTTP errors, malformed JSON and wrong vector lengths raise
    ``EmbeddingError``; messages never contain the API key.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str,
        dimensions: int | None = None,
        timeout_seconds: float = 30,
        batch_size: int = 64,
    ) -> None:
        if not base_url or not model:
            raise ConfigError("the embedding endpoint needs both a base_url and a model")
        if dimensions is not None and dimensions < 1:
            raise ConfigError(f"embedding dimensions must be >= 1, got {dimensions}")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.batch_size = max(1, batch_size)
        self.timeout_seconds = timeout_seconds
        self._send_dimensions = dimensions
        self._dimensions = dimensions
        self._api_key = api_key
        self._lock = threading.Lock()
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout_seconds, headers=headers)

    @property
    def dimensions(self) -> int:
        """The vector length: configured, learnt from a reply, or probed now."""
        if self._dimensions is None:
            self.embed([_PROBE_TEXT])
        assert self._dimensions is not None  # embed() learnt it or raised
        return self._dimensions

    @property
    def name(self) -> str:
        """``openai:<model>@<dimensions>`` (may probe the endpoint, see ``dimensions``)."""
        return f"openai:{self.model}@{self.dimensions}"

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit row per text, in input order."""
        batches = [
            self._embed_batch(list(texts[i : i + self.batch_size]))
            for i in range(0, len(texts), self.batch_size)
        ]
        if not batches:
            return np.zeros((0, self._dimensions or 0), dtype=np.float32)
        out = np.vstack(batches).astype(np.float32, copy=False)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def close(self) -> None:
        """Release the HTTP connection pool."""
        self._client.close()

    def _embed_batch(self, batch: list[str]) -> Vectors:
        body: dict[str, Any] = {"model": self.model, "input": [text[:MAX_INPUT_CHARS] for text in batch]}
        if self._send_dimensions is not None:
            body["dimensions"] = self._send_dimensions
        payload = self._post(body)
        rows = self._rows(payload, len(batch))
        with self._lock:
            if self._dimensions is None:
                self._dimensions = len(rows[0])
                log.info("embedding endpoint %s: %s has %d dimensions", self.url, self.model, len(rows[0]))
            expected = self._dimensions
        for i, row in enumerate(rows):
            if len(row) != expected:
                raise EmbeddingError(
                    f"embedding endpoint {self.url} returned a vector of length {len(row)} "
                    f"for input {i}, expected {expected}"
                )
        try:
            return np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbeddingError(f"embedding endpoint {self.url} returned non-numeric vectors") from exc

    def _post(self, body: dict[str, Any]) -> Any:
        try:
            response = self._client.post(self.url, json=body)
        except httpx.TimeoutException as exc:
            raise EmbeddingError(
                f"embedding endpoint {self.url} timed out after {self.timeout_seconds:g}s"
            ) from exc
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"embedding endpoint {self.url} failed: {type(exc).__name__}") from exc
        if response.status_code >= 400:
            status = response.status_code
            raise EmbeddingError(
                f"embedding endpoint {self.url} answered HTTP {status}: {self._snippet(response)}"
            )
        try:
            return response.json()
        except ValueError as exc:
            raise EmbeddingError(
                f"embedding endpoint {self.url} returned invalid JSON: {self._snippet(response)}"
            ) from exc

    def _rows(self, payload: Any, count: int) -> list[list[float]]:
        """The reply's vectors ordered by their ``index``; exactly one per input."""
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise EmbeddingError(f"embedding endpoint {self.url} reply has no 'data' list")
        by_index: dict[int, list[float]] = {}
        for pos, item in enumerate(data):
            index = item.get("index", pos) if isinstance(item, dict) else None
            vector = item.get("embedding") if isinstance(item, dict) else None
            if not isinstance(index, int) or not isinstance(vector, list) or not vector:
                raise EmbeddingError(f"embedding endpoint {self.url} reply item {pos} is malformed")
            by_index[index] = vector
        if sorted(by_index) != list(range(count)):
            raise EmbeddingError(
                f"embedding endpoint {self.url} returned indexes {sorted(by_index)[:10]} for {count} inputs"
            )
        return [by_index[i] for i in range(count)]

    def _snippet(self, response: httpx.Response) -> str:
        """A short, key-free excerpt of a reply body for error messages."""
        text = response.text[:_BODY_SNIPPET]
        return text.replace(self._api_key, "***") if self._api_key else text
