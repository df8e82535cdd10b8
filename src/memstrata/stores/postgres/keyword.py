"""Keyword search on PostgreSQL: full-text matching, ranked by BM25 computed in SQL.

Matching: each term becomes ``phraseto_tsquery`` in the store's text search configuration (any
user text is then a valid query: a term is matched as a phrase of its words, never parsed as
syntax); the terms are OR-ed, or, with ``min_match=2``, every pair of terms is AND-ed and the pairs
OR-ed. The tenant columns are inside the GIN index (``btree_gin``), so a tenant's matches are found
without reading other tenants'.

Ranking: Okapi BM25 with FTS5's constants and idf (k1 = 1.2, b = 0.75; idf over every tenant's
records, floored at 1e-6), so both stores order matches alike; PostgreSQL's own ``ts_rank`` has no
idf and ranked measurably worse on LoCoMo (see docs/design.md). A record's term frequency is the
number of positions of the term's lexemes in its ``tsv``; its length (``dl``, positions) is stored
at insert. Reading positions costs a pass over the record's whole ``tsv``, so it is done for the
best matches of a first pass only (see ``_SCORE``). Document frequencies and the average length
change slowly: they are cached for ``STATS_SECONDS``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from memstrata.models import AtomFilter, Layer, MessageFilter, Scored, Tenant, layer_of
from memstrata.stores.postgres import rows
from memstrata.stores.postgres.db import Database
from memstrata.stores.postgres.migrations import SEARCH_CONFIG

TABLES = {Layer.L0: "messages", Layer.L1: "atoms"}
K1, B = 1.2, 0.75
RESCORE_FACTOR, RESCORE_MIN = 2, 50
EXACT_DF_BELOW = 5_000  # document frequencies the planner estimates above this are not counted
STATS_SECONDS = 60.0
_TERMS = (
    f"SELECT u.term, phraseto_tsquery('{SEARCH_CONFIG}', u.term)::text AS q, "
    f"tsvector_to_array(to_tsvector('{SEARCH_CONFIG}', u.term)) AS lexemes FROM unnest(%s::text[]) AS u(term)"
)
# Two passes: BM25 with every term frequency taken as 1 (one tsquery test per term: cheap) keeps
# the best ``RESCORE_FACTOR * k`` (at least ``RESCORE_MIN``) matches; those are scored with their
# real term frequencies (the positions in ``tsv``: exact, but about 5x the cost per record). A
# frequency raises a term's weight by less than (k1 + 1), so a record of the final top k missing
# from the first pass's is rare; on a tenant with fewer matches, the result is exact BM25. On the
# LoCoMo dev set, keyword-only R@10 and R@1000tok are the same as with every match rescored.
_SCORE = """
WITH c AS MATERIALIZED (
    SELECT r.seq, r.tsv, r.dl, ({cases}) / (1 + {k1} * (1 - {b} + {b} * r.dl / %s)) AS pre
    FROM {table} r WHERE {where} ORDER BY pre DESC, r.seq LIMIT %s
)
SELECT c.seq, SUM(t.idf * f.n * {k1p1} / (f.n + {k1} * (1 - {b} + {b} * c.dl / %s))) AS s
FROM c
CROSS JOIN LATERAL (SELECT u.lexeme, COALESCE(array_length(u.positions, 1), 1) AS n FROM unnest(c.tsv) u) f
JOIN unnest(%s::text[], %s::float8[]) AS t(lexeme, idf) ON t.lexeme = f.lexeme
GROUP BY c.seq ORDER BY s DESC, c.seq LIMIT %s
"""


@dataclass(frozen=True, slots=True)
class _Term:
    text: str
    query: str  # tsquery text
    lexemes: tuple[str, ...]


class KeywordIndex:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._df: dict[tuple[Layer, str], tuple[float, int]] = {}  # (layer, tsquery) -> (when, df)
        self._sizes: dict[Layer, tuple[float, int, float]] = {}  # layer -> (when, records, avg dl)

    def size(self, layer: Layer) -> int:
        return int(self._db.query(f"SELECT COALESCE(MAX(seq), 0) AS n FROM {TABLES[layer]}")[0]["n"])

    def document_counts(self, layer: Layer, terms: Sequence[str]) -> dict[str, int]:
        parsed = {t.text: t for t in self._parse(terms)}
        df = self._counts(layer, [t.query for t in parsed.values()])
        return {t: df[parsed[rows.text(t)].query] if rows.text(t) in parsed else 0 for t in terms}

    def tenant_size(self, tenant: Tenant, layer: Layer) -> int:
        found = self._db.query(
            f"SELECT count(*) AS n FROM {TABLES[layer]} WHERE user_id = %s AND agent_id = %s",
            (tenant.user_id, tenant.agent_id),
        )
        return int(found[0]["n"])

    def tenant_document_counts(self, tenant: Tenant, layer: Layer, terms: Sequence[str]) -> dict[str, int]:
        """One query for every term: the tenant's records matching any of them (the GIN index
        holds the tenant columns), each counted for the terms it matches."""
        parsed = {t.text: t for t in self._parse(terms)}
        queries = list(dict.fromkeys(t.query for t in parsed.values()))
        df: dict[str, int] = {}
        if queries:
            counts = ", ".join(
                f"count(*) FILTER (WHERE tsv @@ %s::tsquery) AS c{i}" for i in range(len(queries))
            )
            found = self._db.query(
                f"SELECT {counts} FROM {TABLES[layer]} "
                "WHERE user_id = %s AND agent_id = %s AND tsv @@ %s::tsquery",
                [*queries, tenant.user_id, tenant.agent_id, " | ".join(f"({q})" for q in queries)],
            )[0]
            df = {q: int(found[f"c{i}"]) for i, q in enumerate(queries)}
        return {t: df[parsed[rows.text(t)].query] if rows.text(t) in parsed else 0 for t in terms}

    def keyword(
        self,
        tenant: Tenant,
        flt: MessageFilter | AtomFilter,
        terms: Sequence[str],
        k: int,
        *,
        min_match: int = 1,
    ) -> list[Scored]:
        parsed = self._parse(terms)
        if not parsed or k <= 0:
            return []
        if min_match >= 2 and len(parsed) >= 2:
            match = " | ".join(f"(({a.query}) & ({b.query}))" for a, b in combinations(parsed, 2))
        else:
            match = " | ".join(f"({t.query})" for t in parsed)
        layer = layer_of(flt)
        records, avgdl = self._stats(layer)
        idf = self._idf(layer, parsed, records)
        weights: dict[str, float] = {}
        for t in parsed:  # a phrase's lexemes share its idf
            for lexeme in t.lexemes:
                weights[lexeme] = weights.get(lexeme, 0.0) + idf[t.query] / len(t.lexemes)
        fw, fp = rows.filter_clause(flt, "r")
        where = " AND ".join(["r.user_id = %s", "r.agent_id = %s", "r.tsv @@ %s::tsquery", *fw])
        cases = " + ".join("CASE WHEN r.tsv @@ %s::tsquery THEN %s ELSE 0 END" for _ in parsed)
        sql = _SCORE.format(cases=cases, k1p1=K1 + 1, k1=K1, b=B, table=TABLES[layer], where=where)
        params: list[object] = [x for t in parsed for x in (t.query, idf[t.query])]
        params += [avgdl, tenant.user_id, tenant.agent_id, match, *fp, max(RESCORE_MIN, RESCORE_FACTOR * k)]
        params += [avgdl, list(weights), list(weights.values()), k]
        return [Scored(int(r["seq"]), float(r["s"])) for r in self._db.query(sql, params)]

    def _idf(self, layer: Layer, parsed: Sequence[_Term], records: int) -> dict[str, float]:
        """BM25 idf per term query, as FTS5 computes it (floored at 1e-6)."""
        df = self._counts(layer, [t.query for t in parsed])
        # ``df`` is counted now while ``records`` may be a minute old: never let it fall below.
        return {q: max(math.log((max(records, n) - n + 0.5) / (n + 0.5)), 1e-6) for q, n in df.items()}

    def _parse(self, terms: Sequence[str]) -> list[_Term]:
        """The terms that have a word the index keeps, each once, with its query and lexemes."""
        clean = list(dict.fromkeys(rows.text(t) for t in terms if t.strip()))
        if not clean:
            return []
        found = self._db.query(_TERMS, (clean,))
        return [_Term(r["term"], r["q"], tuple(r["lexemes"])) for r in found if r["q"] and r["lexemes"]]

    def _counts(self, layer: Layer, queries: Sequence[str]) -> dict[str, int]:
        """How many records of ``layer`` (every tenant) match each query; cached a while."""
        now = time.monotonic()
        out: dict[str, int] = {}
        with self._lock:
            for q in queries:
                hit = self._df.get((layer, q))
                if hit is not None and now - hit[0] < STATS_SECONDS:
                    out[q] = hit[1]
        todo = list(dict.fromkeys(q for q in queries if q not in out))
        if not todo:
            return out
        found = self._df_now(layer, todo)
        with self._lock:
            if len(self._df) > 50_000:
                self._df.clear()
            for q, n in found.items():
                out[q] = n
                self._df[(layer, q)] = (now, n)
        return out

    def _df_now(self, layer: Layer, queries: Sequence[str]) -> dict[str, int]:
        """Document frequencies: the planner's estimate (from the column statistics of its most
        common lexemes: well under a millisecond) for a common term, an exact count for the
        others. Counting a common term visits every record holding it (tens of milliseconds per
        100k records), and BM25's idf barely moves with its precise value."""
        table = TABLES[layer]
        out: dict[str, int] = {}
        with self._db.errors("cannot read"), self._db.pool.connection() as conn:
            for q in queries:
                plan = conn.execute(
                    f"EXPLAIN (FORMAT JSON) SELECT 1 FROM {table} WHERE tsv @@ %s::tsquery", (q,)
                )
                row = plan.fetchone()
                estimate = int(row["QUERY PLAN"][0]["Plan"]["Plan Rows"]) if row else 0
                if estimate <= EXACT_DF_BELOW:
                    counted = conn.execute(
                        f"SELECT count(*) AS n FROM {table} WHERE tsv @@ %s::tsquery", (q,)
                    )
                    found = counted.fetchone()
                    estimate = int(found["n"]) if found else 0
                out[q] = estimate
        return out

    def _stats(self, layer: Layer) -> tuple[int, float]:
        """Records in ``layer`` and their average length (positions); cached a while."""
        now = time.monotonic()
        with self._lock:
            hit = self._sizes.get(layer)
        if hit is not None and now - hit[0] < STATS_SECONDS:
            return hit[1], hit[2]
        found = self._db.query(f"SELECT count(*) AS n, COALESCE(avg(dl), 1) AS dl FROM {TABLES[layer]}")[0]
        records, avgdl = int(found["n"]), max(float(found["dl"]), 1.0)
        with self._lock:
            self._sizes[layer] = (now, records, avgdl)
        return records, avgdl
