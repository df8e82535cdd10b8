"""Copying a whole memory from one store to another (``memstrata migrate``), verified per layer:
``copy`` copies (records, vectors, state, scenes, personas), ``digest`` fingerprints each layer.
The stores are opened by the composition root (``wiring.migrate``)."""

from memstrata.interchange.migrate.copy import MigrationReport, copy_memory

__all__ = ["MigrationReport", "copy_memory"]
