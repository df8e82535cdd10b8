"""Search primitives on SQLite: FTS5 BM25 and exact numpy cosine top-K, both per tenant.

Vectors of a tenant's layer are loaded once into a matrix; a query is one matrix-vector product.
New vectors of later records (every capture's) are appended to the kept matrix in place of
reloading it: reloading after every capture put a reload of the whole tenant on the next
search's path (a search p95 of 11 ms against 1.5 ms behind the proxy, at a few hundred messages).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations, pairwise

import numpy as np
import numpy.typing as npt

from memstrata.blas import single_threaded_blas
from memstrata.models import AtomFilter, Layer, MessageFilter, Scored, Tenant, Vectors, layer_of
from memstrata.retrieval.terms import porter_stem
from memstrata.stores.sqlite import rows
from memstrata.stores.sqlite.db import Database

_TABLES = {Layer.L0: ("messages", "messages_fts"), Layer.L1: ("atoms", "atoms_fts")}
_MODEL_KEY = "embedding_model"
_VERSION_KEY = "index_version"
_IN_CHUNK = 900  # parameters per IN list, well under SQLite's limit


def match_expression(terms: Sequence[str], op: str = "OR") -> str:
    """Each term as a quoted FTS5 string (any user text is then a valid query), joined by ``op``."""
    return f" {op} ".join('"' + t.replace('"', '""') + '"' for t in terms if t.strip())


@dataclass(frozen=True, slots=True)
class _Matrix:
    """A tenant's layer's vectors by seq. ``seqs`` and ``vectors`` are the first rows of buffers
    with room to grow: a later matrix appends into the room, which this one's views never see."""

    seqs: npt.NDArray[np.int64]
    vectors: Vectors
    seq_room: npt.NDArray[np.int64]
    vector_room: Vectors

    @classmethod
    def of(cls, seqs: npt.NDArray[np.int64], vectors: Vectors) -> _Matrix:
        return cls(seqs, vectors, seqs, vectors)

    def appended(self, seqs: Sequence[int], vectors: Vectors) -> _Matrix | None:
        """This matrix with the rows of later records added (amortised: the room doubles when
        full), or None when they are not all later than its last record or of another size."""
        n, k = len(self.seqs), len(seqs)
        if not n or not k or seqs[0] <= self.seqs[-1] or any(b <= a for a, b in pairwise(seqs)):
            return None
        if vectors.shape[1:] != self.vectors.shape[1:]:
            return None
        seq_room, vector_room = self.seq_room, self.vector_room
        if n + k > len(seq_room):
            size = max(2 * n, n + k)
            seq_room = np.empty(size, dtype=np.int64)
            vector_room = np.empty((size, self.vectors.shape[1]), dtype=np.float32)
            seq_room[:n], vector_room[:n] = self.seqs, self.vectors
        seq_room[n : n + k] = seqs
        vector_room[n : n + k] = vectors
        return _Matrix(seq_room[: n + k], vector_room[: n + k], seq_room, vector_room)


class SqliteSearchIndex:
    """``shared``: other processes of the data directory write vectors too (a server's worker), so
    a kept matrix is checked against the table before each use (``_caught_up``)."""

    def __init__(self, db: Database, *, shared: bool = False) -> None:
        self._db = db
        self._shared = shared
        self._cache: dict[tuple[Tenant, Layer], _Matrix] = {}
        # Bumped by every change of a tenant's layer's vectors: a matrix read from the database
        # while one was made is not kept (it may predate it).
        self._changes: dict[tuple[Tenant, Layer], int] = {}
        self._resets = 0  # the same for every tenant at once (``reset_vectors``)
        self._cache_lock = threading.Lock()
        for _, fts in _TABLES.values():
            db.for_every_reader(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{fts}_vocab USING fts5vocab(main, '{fts}', 'row')"
            )

    def size(self, layer: Layer) -> int:
        _, fts = _TABLES[layer]
        return int(self._db.query(f"SELECT COALESCE(MAX(rowid), 0) AS n FROM {fts}")[0]["n"])

    def document_counts(self, layer: Layer, terms: Sequence[str]) -> dict[str, int]:
        """Read from the FTS vocabulary by stem (FTS5's porter tokenizer stems the index side)."""
        _, fts = _TABLES[layer]
        stems = {t: porter_stem(t) for t in terms}
        unique = sorted(set(stems.values()))  # two words may share a stem
        if not unique:
            return {}
        found = self._db.query(
            f"SELECT term, doc FROM temp.{fts}_vocab WHERE term IN ({','.join('?' * len(unique))})", unique
        )
        df = {r["term"]: int(r["doc"]) for r in found}
        return {t: df.get(stem, 0) for t, stem in stems.items()}

    def tenant_size(self, tenant: Tenant, layer: Layer) -> int:
        table, _ = _TABLES[layer]  # every row has its FTS row (same rowid), and only it
        found = self._db.query(
            f"SELECT count(*) AS n FROM {table} WHERE user_id = ? AND agent_id = ?",
            [tenant.user_id, tenant.agent_id],
        )
        return int(found[0]["n"])

    def tenant_document_counts(self, tenant: Tenant, layer: Layer, terms: Sequence[str]) -> dict[str, int]:
        """One FTS5 query per term, over the rowids from the tenant's first record to its last:
        FTS5 seeks into the term's posting list there, and a tenant whose records came together
        (an import, a user's busy hour) reads its own part of the list, not every tenant's (a
        PrefEval dev tenant, 88 of 8,892 messages, counted "user" in 0.2 ms against 4.8).
        CROSS JOIN keeps the posting list outside and looks each match's row up by key: left to
        the planner, it walked the tenant's rows and ran the MATCH for each (8 ms against 0.1,
        419 messages of a LoCoMo conversation)."""
        table, fts = _TABLES[layer]
        tenant_args = [tenant.user_id, tenant.agent_id]
        span = self._db.query(
            f"SELECT MIN(seq) AS lo, MAX(seq) AS hi FROM {table} WHERE user_id = ? AND agent_id = ?",
            tenant_args,
        )[0]
        out: dict[str, int] = {}
        for term in dict.fromkeys(terms):
            expr = match_expression([term])
            found = (
                self._db.query(
                    f"SELECT count(*) AS n FROM {fts} f CROSS JOIN {table} r ON r.seq = f.rowid "
                    f"WHERE {fts} MATCH ? AND f.rowid BETWEEN ? AND ? AND r.user_id = ? AND r.agent_id = ?",
                    [expr, span["lo"], span["hi"], *tenant_args],
                )
                if expr and span["lo"] is not None
                else []
            )
            out[term] = int(found[0]["n"]) if found else 0
        return out

    def keyword(
        self,
        tenant: Tenant,
        flt: MessageFilter | AtomFilter,
        terms: Sequence[str],
        k: int,
        *,
        min_match: int = 1,
    ) -> list[Scored]:
        if min_match >= 2 and len(terms) >= 2:
            quoted = [match_expression([t]) for t in terms]
            expr = " OR ".join(f"({a} AND {b})" for a, b in combinations(quoted, 2))
        else:
            expr = match_expression(terms)
        return self._bm25(tenant, layer_of(flt), expr, k, flt)

    def _bm25(
        self, tenant: Tenant, layer: Layer, expr: str, k: int, flt: MessageFilter | AtomFilter
    ) -> list[Scored]:
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
        return [Scored(int(r[0]), -float(r[1])) for r in found]

    def vector(self, tenant: Tenant, flt: MessageFilter | AtomFilter, query: Vectors, k: int) -> list[Scored]:
        layer = layer_of(flt)
        m = self._matrix(tenant, layer)
        if not len(m.seqs):
            return []
        with single_threaded_blas():  # OpenBLAS' two threads stalled each other on a busy machine
            scores = m.vectors @ query.astype(np.float32).reshape(-1)
        # Seqs and scores leave numpy as lists at once: indexing element by element made a numpy
        # scalar per candidate (a search reads hundreds), the larger part of this method's time.
        if rows.is_trivial(flt):
            best = _best(scores, k)
            return [Scored(s, v) for s, v in zip(m.seqs[best].tolist(), scores[best].tolist(), strict=True)]
        # Filtered: the best-scoring records are checked against the filter in SQL, a growing
        # window at a time, until k pass or every record was looked at. (Listing every record the
        # filter allows cost a scan of the tenant per query: 150 ms at 100k atoms.)
        window = max(4 * k, 256)
        while True:
            best = _best(scores, min(window, len(scores)))
            seqs: list[int] = m.seqs[best].tolist()
            allowed = self._allowed_among(tenant, layer, flt, seqs)
            found = [Scored(s, v) for s, v in zip(seqs, scores[best].tolist(), strict=True) if s in allowed]
            if len(found) >= k or window >= len(scores):
                return found[:k]
            window *= 4

    def put_vectors(self, tenant: Tenant, layer: Layer, seqs: Sequence[int], vectors: Vectors) -> None:
        rows = np.asarray(vectors, dtype=np.float32)  # stored as bytes, and appended to the matrix
        with self._db.tx() as c:
            c.executemany(
                # An upsert, not OR REPLACE: that deletes the old row first and would fill a NULL
                # with a column default instead of raising.
                "INSERT INTO vectors (layer, seq, user_id, agent_id, vec) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (layer, seq) DO UPDATE SET user_id = excluded.user_id, "
                "agent_id = excluded.agent_id, vec = excluded.vec",
                [
                    (str(layer), s, tenant.user_id, tenant.agent_id, row.tobytes())
                    for s, row in zip(seqs, rows, strict=True)
                ],
            )
        with self._cache_lock:
            key = (tenant, layer)
            self._changes[key] = self._changes.get(key, 0) + 1
            kept = self._cache.pop(key, None)
            grown = kept.appended(list(seqs), rows) if kept is not None else None
            if grown is not None:
                self._cache[key] = grown

    def drop_vectors(self, tenant: Tenant, layer: Layer, seqs: Sequence[int]) -> None:
        with self._db.tx() as c:
            c.executemany(
                "DELETE FROM vectors WHERE layer = ? AND seq = ? AND user_id = ? AND agent_id = ?",
                [(str(layer), s, tenant.user_id, tenant.agent_id) for s in seqs],
            )
        self._forget([(tenant, layer)])

    def evict(self, tenant: Tenant) -> None:
        """Forget the tenant's cached vector matrices (its rows were erased)."""
        self._forget([(tenant, layer) for layer in _TABLES])

    def _forget(self, keys: Sequence[tuple[Tenant, Layer]]) -> None:
        with self._cache_lock:
            for key in keys:
                self._changes[key] = self._changes.get(key, 0) + 1
                self._cache.pop(key, None)

    def get_vectors(self, tenant: Tenant, layer: Layer, seqs: Sequence[int]) -> dict[int, Vectors]:
        m = self._matrix(tenant, layer)
        if not len(m.seqs) or not seqs:
            return {}
        wanted = np.asarray(list(seqs), dtype=np.int64)
        rows_at = np.searchsorted(m.seqs, wanted)  # the matrix is ordered by seq
        out: dict[int, Vectors] = {}
        for seq, i in zip(wanted.tolist(), rows_at.tolist(), strict=True):
            if i < len(m.seqs) and m.seqs[i] == seq:
                out[seq] = m.vectors[i]
        return out

    def missing_vectors(self, layer: Layer, after_seq: int, limit: int) -> list[tuple[Tenant, int]]:
        table, _ = _TABLES[layer]
        found = self._db.query(
            f"SELECT r.seq, r.user_id, r.agent_id FROM {table} r WHERE r.seq > ? "
            "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.layer = ? AND v.seq = r.seq) ORDER BY r.seq LIMIT ?",
            (after_seq, str(layer), limit),
        )
        return [(Tenant(r["user_id"], r["agent_id"]), int(r["seq"])) for r in found]

    def count_missing_vectors(self, layer: Layer) -> int:
        table, _ = _TABLES[layer]
        found = self._db.query(
            f"SELECT COUNT(*) AS n FROM {table} r "
            "WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.layer = ? AND v.seq = r.seq)",
            (str(layer),),
        )
        return int(found[0]["n"])

    def embedding_model(self) -> str | None:
        return self._db.meta(_MODEL_KEY)

    def reset_vectors(self, model: str) -> None:
        with self._db.tx() as c:
            c.execute("DELETE FROM vectors")
            c.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (_MODEL_KEY, model),
            )
        with self._cache_lock:
            self._resets += 1
            self._cache.clear()

    def rewrite_texts(self, layer: Layer, texts: Mapping[int, str]) -> None:
        _, fts = _TABLES[layer]
        with self._db.tx() as c:
            c.executemany(f"DELETE FROM {fts} WHERE rowid = ?", [(seq,) for seq in texts])
            c.executemany(f"INSERT INTO {fts} (rowid, body) VALUES (?, ?)", list(texts.items()))

    def index_version(self) -> int:
        return int(self._db.meta(_VERSION_KEY) or 1)

    def set_index_version(self, version: int) -> None:
        with self._db.tx() as c:
            c.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (_VERSION_KEY, str(version)),
            )

    def choose_model(self, model: str) -> str:
        with self._db.tx() as c:
            c.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                (_MODEL_KEY, model),
            )
            return str(c.execute("SELECT value FROM meta WHERE key = ?", (_MODEL_KEY,)).fetchone()[0])

    def _matrix(self, tenant: Tenant, layer: Layer) -> _Matrix:
        key = (tenant, layer)
        with self._cache_lock:
            hit = self._cache.get(key)
            seen = (self._resets, self._changes.get(key, 0))
        if hit is not None:
            return self._caught_up(key, hit, seen) if self._shared else hit
        found = self._db.query(
            "SELECT seq, vec FROM vectors WHERE user_id = ? AND agent_id = ? AND layer = ? ORDER BY seq",
            (tenant.user_id, tenant.agent_id, str(layer)),
        )
        seqs = np.fromiter((r["seq"] for r in found), dtype=np.int64, count=len(found))
        if found:
            vectors = np.vstack([np.frombuffer(r["vec"], dtype=np.float32) for r in found])
        else:
            vectors = np.zeros((0, 0), dtype=np.float32)
        built = _Matrix.of(seqs, vectors)
        with self._cache_lock:
            if (self._resets, self._changes.get(key, 0)) == seen:
                self._cache[key] = built
        return built

    def _caught_up(self, key: tuple[Tenant, Layer], hit: _Matrix, seen: tuple[int, int]) -> _Matrix:
        """``hit``, or with the vectors another process added since (one indexed count per search;
        the bulk is read again only when rows went or came below its last one)."""
        tenant, layer = key
        where = "user_id = ? AND agent_id = ? AND layer = ?"
        args = (tenant.user_id, tenant.agent_id, str(layer))
        row = self._db.query(
            f"SELECT COUNT(*) AS n, COALESCE(MAX(seq), 0) AS top FROM vectors WHERE {where}", args
        )[0]
        last = int(hit.seqs[-1]) if len(hit.seqs) else 0
        if (row["n"], row["top"]) == (len(hit.seqs), last):
            return hit
        grown = None
        if row["top"] > last:
            newer = self._db.query(
                f"SELECT seq, vec FROM vectors WHERE {where} AND seq > ? ORDER BY seq", (*args, last)
            )
            if len(hit.seqs) + len(newer) == row["n"]:
                vectors = np.vstack([np.frombuffer(r["vec"], dtype=np.float32) for r in newer])
                grown = hit.appended([int(r["seq"]) for r in newer], vectors)
        with self._cache_lock:
            if (self._resets, self._changes.get(key, 0)) != seen:
                return hit  # this process changed them meanwhile: its own next read catches up
            if grown is None:
                self._cache.pop(key, None)
            else:
                self._cache[key] = grown
        return grown if grown is not None else self._matrix(tenant, layer)

    def _allowed_among(
        self, tenant: Tenant, layer: Layer, flt: MessageFilter | AtomFilter, seqs: Sequence[int]
    ) -> set[int]:
        """Which of ``seqs`` (the tenant's records) the filter lets through."""
        table, _ = _TABLES[layer]
        fw, fp = rows.filter_clause(flt)
        allowed: set[int] = set()
        for i in range(0, len(seqs), _IN_CHUNK):
            chunk = list(seqs[i : i + _IN_CHUNK])
            # Unary + keeps the planner on the primary key, one probe per seq: through the tenant
            # index the check cost 0.56 against 0.33 ms for 219 atoms (docs/benchmarks.md).
            where = " AND ".join(
                [f"seq IN ({','.join('?' * len(chunk))})", "+user_id = ?", "+agent_id = ?", *fw]
            )
            found = self._db.query(
                f"SELECT seq FROM {table} WHERE {where}", [*chunk, tenant.user_id, tenant.agent_id, *fp]
            )
            allowed.update(r[0] for r in found)
        return allowed


def _best(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    """Indices of the ``k`` highest finite scores, best first (ties by position)."""
    if k <= 0 or not len(scores):
        return np.zeros(0, dtype=np.intp)
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return top[np.isfinite(scores[top])]
