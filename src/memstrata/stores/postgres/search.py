"""Search primitives on PostgreSQL: full-text top-K and pgvector HNSW top-K, both per tenant.

Keyword: full-text search ranked by BM25 (``keyword.py``).

Vector: one table per layer (``vectors_l0``, ``vectors_l1``) whose ``vector(dim)`` column is sized
from the first vectors stored (the embedder's dimensions), with an HNSW cosine index. A query
filters by tenant (and the layer's filter) inside the query and uses pgvector's iterative index
scans, so a filtered query still returns ``k`` rows when the tenant has them. Changing the
embedding model drops both tables; the next vectors create them again.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

import numpy as np

from memstrata.errors import StoreError
from memstrata.models import AtomFilter, Layer, MessageFilter, Scored, Tenant, Vectors, layer_of
from memstrata.stores.postgres import rows
from memstrata.stores.postgres.db import Database
from memstrata.stores.postgres.keyword import TABLES, KeywordIndex
from memstrata.stores.postgres.migrations import SEARCH_CONFIG

_TABLES = TABLES
_VECTORS = {Layer.L0: "vectors_l0", Layer.L1: "vectors_l1"}
_MODEL_KEY = "embedding_model"
_VERSION_KEY = "index_version"
_DDL_LOCK = 0x6D73_0000_0003  # creating or dropping the vector tables
# The HNSW graph's build parameters and its search candidate list (at least k is asked for). At 1M
# atoms (bench/store_compare.py) pgvector's defaults (m 16, ef_construction 64, ef_search 40) gave
# recall@10 0.67 against exact search, ef_search 100 0.85, 400 0.95; ef_construction 128 with
# ef_search 100 0.980 and 200 0.978-0.998 (p95 8-11 ms), for a build about twice as long.
HNSW_OPTIONS = "m = 16, ef_construction = 128"
EF_SEARCH = 200


class PostgresSearchIndex:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._keyword = KeywordIndex(db)
        self._dims: dict[Layer, int] = {}
        self._lock = threading.Lock()

    # --- keyword (see keyword.py) ---------------------------------------------------------------

    def size(self, layer: Layer) -> int:
        return self._keyword.size(layer)

    def document_counts(self, layer: Layer, terms: Sequence[str]) -> dict[str, int]:
        return self._keyword.document_counts(layer, terms)

    def tenant_size(self, tenant: Tenant, layer: Layer) -> int:
        return self._keyword.tenant_size(tenant, layer)

    def tenant_document_counts(self, tenant: Tenant, layer: Layer, terms: Sequence[str]) -> dict[str, int]:
        return self._keyword.tenant_document_counts(tenant, layer, terms)

    def keyword(
        self,
        tenant: Tenant,
        flt: MessageFilter | AtomFilter,
        terms: Sequence[str],
        k: int,
        *,
        min_match: int = 1,
    ) -> list[Scored]:
        return self._keyword.keyword(tenant, flt, terms, k, min_match=min_match)

    # --- vectors ----------------------------------------------------------------------------------

    def vector(self, tenant: Tenant, flt: MessageFilter | AtomFilter, query: Vectors, k: int) -> list[Scored]:
        layer = layer_of(flt)
        if self._dim(layer) is None or k <= 0:
            return []
        vec = np.asarray(query, dtype=np.float32).reshape(-1)
        fw, fp = rows.filter_clause(flt, "r")
        join = f"JOIN {_TABLES[layer]} r ON r.seq = v.seq " if fw else ""
        where = " AND ".join(["v.user_id = %s", "v.agent_id = %s", *fw])
        with self._db.tx() as c:
            c.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            c.execute(f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, min(k, 1000))}")
            found = c.execute(
                # relaxed_order may return neighbours slightly out of order: sort what it found.
                f"WITH nn AS MATERIALIZED (SELECT v.seq, v.vec <=> %s AS d FROM {_VECTORS[layer]} v {join}"
                f"WHERE {where} ORDER BY v.vec <=> %s LIMIT %s) SELECT seq, 1 - d AS s FROM nn ORDER BY d, seq",
                [vec, tenant.user_id, tenant.agent_id, *fp, vec, k],
            ).fetchall()
        return [Scored(int(r["seq"]), float(r["s"])) for r in found]

    def rewrite_texts(self, layer: Layer, texts: Mapping[int, str]) -> None:
        if not texts:
            return
        with self._db.tx() as c:
            c.execute(
                f"UPDATE {_TABLES[layer]} r SET tsv = x.v, dl = memstrata_length(x.v) "
                f"FROM (SELECT u.seq, to_tsvector('{SEARCH_CONFIG}', u.body) AS v "
                "FROM unnest(%s::bigint[], %s::text[]) AS u(seq, body)) x WHERE r.seq = x.seq",
                (list(texts), [rows.text(t) for t in texts.values()]),
            )

    def index_version(self) -> int:
        return int(self._db.meta(_VERSION_KEY) or 1)

    def set_index_version(self, version: int) -> None:
        with self._db.tx() as c:
            c.execute(
                "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (_VERSION_KEY, str(version)),
            )

    def put_vectors(self, tenant: Tenant, layer: Layer, seqs: Sequence[int], vectors: Vectors) -> None:
        matrix = np.asarray(vectors, dtype=np.float32)
        if not len(seqs):
            return
        self._ensure(layer, int(matrix.shape[1]))
        with self._db.tx() as c, c.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {_VECTORS[layer]} (seq, user_id, agent_id, vec) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (seq) DO UPDATE SET vec = excluded.vec",
                [(s, tenant.user_id, tenant.agent_id, v) for s, v in zip(seqs, matrix, strict=True)],
            )

    def drop_vectors(self, tenant: Tenant, layer: Layer, seqs: Sequence[int]) -> None:
        if not seqs or self._dim(layer) is None:
            return  # (deleting a record deletes its vector already: the foreign key cascades)
        with self._db.tx() as c:
            c.execute(
                f"DELETE FROM {_VECTORS[layer]} WHERE seq = ANY(%s) AND user_id = %s AND agent_id = %s",
                (list(seqs), tenant.user_id, tenant.agent_id),
            )

    def get_vectors(self, tenant: Tenant, layer: Layer, seqs: Sequence[int]) -> dict[int, Vectors]:
        if not seqs or self._dim(layer) is None:
            return {}
        found = self._db.query(
            f"SELECT seq, vec FROM {_VECTORS[layer]} WHERE seq = ANY(%s) AND user_id = %s AND agent_id = %s",
            (list(seqs), tenant.user_id, tenant.agent_id),
        )
        return {int(r["seq"]): _array(r["vec"]) for r in found}

    def missing_vectors(self, layer: Layer, after_seq: int, limit: int) -> list[tuple[Tenant, int]]:
        table = _TABLES[layer]
        absent = (
            f"AND NOT EXISTS (SELECT 1 FROM {_VECTORS[layer]} v WHERE v.seq = r.seq) "
            if self._dim(layer) is not None
            else ""
        )
        found = self._db.query(
            f"SELECT r.seq, r.user_id, r.agent_id FROM {table} r WHERE r.seq > %s {absent}ORDER BY r.seq LIMIT %s",
            (after_seq, limit),
        )
        return [(Tenant(r["user_id"], r["agent_id"]), int(r["seq"])) for r in found]

    def count_missing_vectors(self, layer: Layer) -> int:
        table = _TABLES[layer]
        if self._dim(layer) is None:
            return int(self._db.query(f"SELECT count(*) AS n FROM {table}")[0]["n"])
        found = self._db.query(
            f"SELECT count(*) AS n FROM {table} r "
            f"WHERE NOT EXISTS (SELECT 1 FROM {_VECTORS[layer]} v WHERE v.seq = r.seq)"
        )
        return int(found[0]["n"])

    def embedding_model(self) -> str | None:
        return self._db.meta(_MODEL_KEY)

    def reset_vectors(self, model: str) -> None:
        with self._db.tx() as c:
            c.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))
            for table in _VECTORS.values():
                c.execute(f"DROP TABLE IF EXISTS {table}")
            c.execute(
                "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (_MODEL_KEY, model),
            )
        with self._lock:
            self._dims.clear()

    def choose_model(self, model: str) -> str:
        with self._db.tx() as c:
            c.execute(
                "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING",
                (_MODEL_KEY, model),
            )
            row = c.execute("SELECT value FROM meta WHERE key = %s", (_MODEL_KEY,)).fetchone()
        return str(row["value"]) if row else model

    # --- the vector tables ------------------------------------------------------------------------

    def _dim(self, layer: Layer) -> int | None:
        """The dimensions of the layer's vector table, or None when it does not exist (yet)."""
        with self._lock:
            if layer in self._dims:
                return self._dims[layer]
        found = self._db.query(
            "SELECT a.atttypmod AS dim FROM pg_attribute a WHERE a.attrelid = to_regclass(%s) AND a.attname = 'vec'",
            (_VECTORS[layer],),
        )
        if not found:
            return None
        with self._lock:
            self._dims[layer] = int(found[0]["dim"])
        return self._dims[layer]

    def _ensure(self, layer: Layer, dim: int) -> None:
        """Create the layer's vector table for ``dim``-dimensional vectors when it does not exist."""
        known = self._dim(layer)
        if known is not None:
            if known != dim:
                raise StoreError(f"{_VECTORS[layer]} holds {known}-dimensional vectors, not {dim}: reindex")
            return
        table, records = _VECTORS[layer], _TABLES[layer]
        with self._db.tx() as c:
            c.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))
            c.execute(
                f"CREATE TABLE IF NOT EXISTS {table} (seq bigint PRIMARY KEY REFERENCES {records} (seq) "
                f"ON DELETE CASCADE, user_id text NOT NULL, agent_id text NOT NULL, vec vector({dim}) NOT NULL)"
            )
            c.execute(f"CREATE INDEX IF NOT EXISTS {table}_tenant ON {table} (user_id, agent_id)")
            c.execute(
                f"CREATE INDEX IF NOT EXISTS {table}_hnsw ON {table} USING hnsw (vec vector_cosine_ops)"
            )
        with self._lock:
            self._dims.pop(layer, None)


def _array(value: object) -> Vectors:
    """A stored vector as float32 (pgvector hands back an array, or a ``Vector`` from binary rows)."""
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy is not None else value, dtype=np.float32)
