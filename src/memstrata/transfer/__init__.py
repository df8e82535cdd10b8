"""Copying a whole memory from one store to another (``memstrata migrate``), verified per layer."""

from memstrata.transfer.copy import MigrationReport, migrate

__all__ = ["MigrationReport", "migrate"]
