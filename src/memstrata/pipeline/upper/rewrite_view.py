"""``RewriteView``: the scene folder as a scene writer sees it while an L2 run replaces scenes.

A scene that held a removed atom (deleted, expired, forgotten) is written again from its remaining
members: the writer must see it blank, so no text of the removed atom can survive whatever the
writer does. A rebuild starts from no scene at all: the writer sees none of the old ones. Either
way the store keeps the old text until the writer's new text replaces it, so a reader (the
console, ``read_scene``, recall's scene navigation) sees the old scene or the new one, never a
blank one nor none. What the writer leaves unwritten is removed at the end of the run
(``unwritten``): a blank scene is what the cleanup removes anyway, and its members go to other
scenes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from memstrata.layers.l2.scene_file import render_scene
from memstrata.models import Scene
from memstrata.ports import Folder


def blanked(scene: Scene) -> Scene:
    """The scene with no summary and no body (META times and heat kept)."""
    return replace(scene, summary="", body="")


class RewriteView:
    """``folder`` with each scene of ``rewrite`` read as blank, and each of ``hidden`` absent,
    until the writer writes it."""

    def __init__(self, folder: Folder, rewrite: Mapping[str, Scene], *, hidden: Iterable[str] = ()) -> None:
        self._folder = folder
        self._blank = {name: render_scene(blanked(s)) for name, s in rewrite.items()}
        self._hidden = set(hidden)

    def names(self) -> list[str]:
        return [n for n in self._folder.names() if n not in self._hidden]

    def read(self, name: str) -> str | None:
        if name in self._blank:
            return self._blank[name]
        if name in self._hidden:
            return None
        return self._folder.read(name)

    def write(self, name: str, text: str) -> None:
        self._folder.write(name, text)
        self._blank.pop(name, None)  # written: the writer's text from now on
        self._hidden.discard(name)

    def shown(self, scenes: Sequence[Scene]) -> tuple[Scene, ...]:
        """``scenes`` (the store's) as the writer sees them."""
        return tuple(blanked(s) if s.name in self._blank else s for s in scenes if s.name not in self._hidden)

    def unwritten(self) -> list[str]:
        """The scenes the writer has not written: the store still holds their old text."""
        return sorted(self._blank.keys() | self._hidden)
