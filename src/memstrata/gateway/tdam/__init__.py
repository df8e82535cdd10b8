"""TencentDB-Agent-Memory (TDAM) compatible routes, so TDAM's own clients (its Hermes and OpenClaw
plugins, its SDKs) can point at memstrata unchanged. A thin mapping onto the facade; the shapes
follow TDAM's gateway (``MemoryCore/src/gateway/server.ts``, ``v2-router.ts``, ``v2-schemas.ts``,
``types.ts``). What differs is listed in ``docs/tdam-compat.md``."""
