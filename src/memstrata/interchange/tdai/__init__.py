"""TencentDB-Agent-Memory data directories, in and out.

fields   one TDAI record's fields, checked (messages, atoms)
read     a TDAI directory into ``TdaiData`` (messages, atoms, scenes, personas); no store access
load     ``TdaiData`` into a memory's store (idempotent; the facade's ``import_tdai``)
write    a memory's layers as a TDAI directory (``export(format="tdai")``)
"""
