"""``RewriteView``: the scene folder as a scene writer sees it while scenes are rewritten.

A scene that held a removed atom (deleted, expired, forgotten) is written again from its remaining
members. The writer must see it empty, so no text of the removed atom can survive whatever the
writer does; but the store keeps the old text until the writer's new text replaces it, so a reader
(the console, ``read_scene``, recall's scene navigation) sees the old scene or the new one, never a
blank. A scene the writer leaves unwritten is removed after the call (``unwritten``): an empty
scene is what the cleanup removes anyway, and its members go to other scenes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from memstrata.layers.l2.scene_file import render_scene
from memstrata.models import Scene
from memstrata.ports import Folder


def blanked(scene: Scene) -> Scene:
    """The scene with no summary and no body (META times and heat kept)."""
    return replace(scene, summary="", body="")


class RewriteView:
    """``folder`` with each scene of ``rewrite`` read as blank until the writer writes it."""

    def __init__(self, folder: Folder, rewrite: Mapping[str, Scene]) -> None:
        self._folder = folder
        self._blank = {name: render_scene(blanked(s)) for name, s in rewrite.items()}

    def names(self) -> list[str]:
        return self._folder.names()  # the scenes to rewrite are still there (with the old text)

    def read(self, name: str) -> str | None:
        if name in self._blank:
            return self._blank[name]
        return self._folder.read(name)

    def write(self, name: str, text: str) -> None:
        self._folder.write(name, text)
        self._blank.pop(name, None)  # written: the writer's text from now on

    def unwritten(self) -> list[str]:
        """The scenes to rewrite that the writer has not written: they still hold the old text."""
        return sorted(self._blank)
