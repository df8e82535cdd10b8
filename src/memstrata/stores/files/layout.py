"""Where a tenant's L2/L3 files live under ``<data dir>/profiles``::

profiles/<tenant folder>/        e.g. u=alice,a=default (percent-encoded ids)
├── scene_blocks/<scene>.md      L2, META format (layers.l2.scene_file)
├── persona.md                   L3
├── .metadata/scene_index.json   rebuilt from the scene files by the pipeline
└── .backup/                     scenes-<time>/ and persona-<time>.md, pruned to a count
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from memstrata.models import Tenant

SCENES = "scene_blocks"
PERSONA = "persona.md"
INDEX = "scene_index.json"


@dataclass(frozen=True, slots=True)
class Layout:
    """Paths of the profile folders below ``root``. Nothing is created here."""

    root: Path

    def profile(self, tenant: Tenant) -> Path:
        return self.root / tenant.folder

    def scenes(self, tenant: Tenant) -> Path:
        return self.profile(tenant) / SCENES

    def persona(self, tenant: Tenant) -> Path:
        return self.profile(tenant) / PERSONA

    def index(self, tenant: Tenant) -> Path:
        return self.profile(tenant) / ".metadata" / INDEX

    def backups(self, tenant: Tenant) -> Path:
        return self.profile(tenant) / ".backup"

    def tenants(self) -> list[Tenant]:
        """Tenants with a profile folder, by folder name."""
        if not self.root.is_dir():
            return []
        found = []
        for p in sorted(self.root.iterdir()):
            tenant = tenant_of(p.name)
            if tenant is not None and p.is_dir():
                found.append(tenant)
        return found


def tenant_of(folder: str) -> Tenant | None:
    """The tenant of a profile folder name ``u=<user>,a=<agent>``, or None for any other name."""
    user, sep, agent = folder.partition(",a=")
    if not sep or not user.startswith("u="):
        return None
    tenant = Tenant(unquote(user[2:]), unquote(agent))
    return tenant if tenant.folder == folder else None


def mtime_ms(p: Path) -> int:
    return p.stat().st_mtime_ns // 1_000_000
