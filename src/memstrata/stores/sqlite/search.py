"""Search primitives on SQLite: FTS5 BM25 and exact numpy cosine top-K, both per tenant.

Vectors of a tenant's layer are loaded once into a matrix and kept until that tenant gets new
vectors; a query is one matrix-vector product.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memstrata.models import Layer, Tenant
from memstrata.ports import AtomFilter, MessageFilter, Scored, Vectors
from memstrata.stores.sqlite import rows
from memstrata.stores.sqlite.db import Database

_TABLES = {Layer.L0: ("messages", "messages_fts"), Layer.L1: ("atoms", "atoms_fts")}
_MODEL_KEY = "embedding_model"


def match_expression(terms: Sequence[str]) -> str:
    """Each term as a quoted FTS5 string (any user text is then a valid query), joined by OR."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms if t.strip())


@dataclass(frozen=True, slots=True)
class _Matrix:
    seqs: npt.NDArray[np.int64]
    vectors: Vectors


class SqliteSearchIndex:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._cache: dict[tuple[Tenant, Layer], _Matrix] = {}
        self._cache_lock = threading.Lock()

    def keyword(
        self, tenant: Tenant, layer: Layer, terms: Sequence[str], k: int, flt: MessageFilter | AtomFilter
    ) -> list[Scored]:
        expr = match_expression(terms)
        if not expr:
            return []
        table, fts = _TABLES[layer]
        fw, fp = rows.filter_clause(flt, "r")
        where = " AND ".join([f"{fts} MATCH ?", "r.user_id = ?", "r.agent_id = ?", *fw])
        found = self._db.query(
            f"SELECT f.rowid AS seq, bm25({fts}) AS s FROM {fts} f JOIN {table} r ON r.seq = f.rowid "
            f"WHERE {where} ORDER BY s LIMIT ?",
            [expr, tenant.user_id, tenant.agent_id, *fp, k],
        )
        return [Scored(int(r["seq"]), -float(r["s"])) for r in found]

    def vector(
        self, tenant: Tenant, layer: Layer, query: Vectors, k: int, flt: MessageFilter | AtomFilter
    ) -> list[Scored]:
        m = self._matrix(tenant, layer)
        if not len(m.seqs):
            return []
        scores = m.vectors @ query.astype(np.float32).reshape(-1)
        if not rows.is_trivial(flt):
            allowed = self._allowed(tenant, layer, flt)
            scores = np.where(np.isin(m.seqs, allowed), scores, -np.inf)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [Scored(int(m.seqs[i]), float(scores[i])) for i in top if np.isfinite(scores[i])]

    def put_vectors(self, tenant: Tenant, layer: Layer, seqs: Sequence[int], vectors: Vectors) -> None:
        blobs = [np.asarray(v, dtype=np.float32).tobytes() for v in vectors]
        with self._db.tx() as c:
            c.executemany(
                "INSERT OR REPLACE INTO vectors (layer, seq, user_id, agent_id, vec) VALUES (?, ?, ?, ?, ?)",
                [
                    (str(layer), s, tenant.user_id, tenant.agent_id, b)
                    for s, b in zip(seqs, blobs, strict=True)
                ],
            )
        with self._cache_lock:
            self._cache.pop((tenant, layer), None)

    def missing_vectors(self, layer: Layer, after_seq: int, limit: int) -> list[tuple[Tenant, int, str]]:
        table, fts = _TABLES[layer]
        found = self._db.query(
            f"SELECT r.seq, r.user_id, r.agent_id, f.body FROM {table} r JOIN {fts} f ON f.rowid = r.seq "
            "WHERE r.seq > ? AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.layer = ? AND v.seq = r.seq) "
            "ORDER BY r.seq LIMIT ?",
            (after_seq, str(layer), limit),
        )
        return [(Tenant(r["user_id"], r["agent_id"]), int(r["seq"]), str(r["body"])) for r in found]

    def embedding_model(self) -> str | None:
        return self._db.meta(_MODEL_KEY)

    def reset_vectors(self, model: str) -> None:
        with self._db.tx() as c:
            c.execute("DELETE FROM vectors")
            c.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (_MODEL_KEY, model))
        with self._cache_lock:
            self._cache.clear()

    def _matrix(self, tenant: Tenant, layer: Layer) -> _Matrix:
        with self._cache_lock:
            hit = self._cache.get((tenant, layer))
        if hit is not None:
            return hit
        found = self._db.query(
            "SELECT seq, vec FROM vectors WHERE user_id = ? AND agent_id = ? AND layer = ? ORDER BY seq",
            (tenant.user_id, tenant.agent_id, str(layer)),
        )
        seqs = np.fromiter((r["seq"] for r in found), dtype=np.int64, count=len(found))
        if found:
            vectors = np.vstack([np.frombuffer(r["vec"], dtype=np.float32) for r in found])
        else:
            vectors = np.zeros((0, 0), dtype=np.float32)
        built = _Matrix(seqs, vectors)
        with self._cache_lock:
            self._cache[(tenant, layer)] = built
        return built

    def _allowed(
        self, tenant: Tenant, layer: Layer, flt: MessageFilter | AtomFilter
    ) -> npt.NDArray[np.int64]:
        table, _ = _TABLES[layer]
        fw, fp = rows.filter_clause(flt)
        where = " AND ".join(["user_id = ?", "agent_id = ?", *fw])
        found = self._db.query(
            f"SELECT seq FROM {table} WHERE {where}", [tenant.user_id, tenant.agent_id, *fp]
        )
        return np.fromiter((r["seq"] for r in found), dtype=np.int64, count=len(found))
