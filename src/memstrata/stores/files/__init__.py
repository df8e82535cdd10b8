"""The file-based L2/L3 store of the embedded backend: ``profiles/<tenant>/`` folders."""

from memstrata.stores.files.persona import FilePersonaStore
from memstrata.stores.files.scenes import FileSceneStore

__all__ = ["FilePersonaStore", "FileSceneStore"]
