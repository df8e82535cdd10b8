"""Taking a memory elsewhere: every layer of a tenant (or of all) as portable files, and back.

    collect     every layer of a tenant, read through the ports (any backend)
    lines       records as JSON lines (all fields and links), and back
    jsonl       the ``jsonl`` layout: one file per layer, a manifest; read back as ``TdaiData``
    tdai        the ``tdai`` layout: a TencentDB-Agent-Memory data directory ``read_tdai`` reads

Both layouts import into an empty directory identically: messages (ids, sessions, times,
speakers, store times), atoms (ids, versions, supersession, sources, metadata, pins, expiry),
scenes (META and body), scene membership and the persona. Store-assigned ``seq`` values are new.
"""
