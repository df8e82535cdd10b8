"""Where a tenant's L2/L3 files live under ``<data dir>/profiles``::

profiles/<tenant folder>/        e.g. u=alice,a=default (percent-encoded ids; see Tenant.folder)
├── scene_blocks/<scene>.md      L2, META format (layers.l2.scene_file)
├── persona.md                   L3
├── .metadata/scene_index.json   rebuilt from the scene files by the pipeline
├── .metadata/tenant.json        the full ids, in folders named by a hash (ids too long for a name)
└── .backup/                     scenes-<time>/ and persona-<time>.md, pruned to a count;
                                 unreadable-<time>-<name>: unreadable files set aside, kept

Every name below ``profiles/`` stays within 255 bytes: tenant folders by ``Tenant.folder``, scene
names by ``names.normalise`` (64-character stems), the rest are fixed or time stamps.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from memstrata.errors import storage_errors
from memstrata.layers.l3 import persona_doc
from memstrata.models import Tenant
from memstrata.stores.files.atomic import atomic_write
from memstrata.stores.files.modes import make_dirs

log = logging.getLogger(__name__)
SCENES = "scene_blocks"
PERSONA = persona_doc.FILE
INDEX = "scene_index.json"
TENANT_FILE = "tenant.json"


@dataclass(frozen=True, slots=True)
class Layout:
    """Paths of the profile folders below ``root``. Only ``ensure`` creates anything."""

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

    def ensure(self, tenant: Tenant) -> Path:
        """The tenant's profile folder, created when missing; a folder named by a hash gets
        ``.metadata/tenant.json`` so ``tenants`` can give its ids back. Raises ``StorageError``."""
        folder = self.profile(tenant)
        with storage_errors(folder):
            make_dirs(folder)
        ids = folder / ".metadata" / TENANT_FILE
        if tenant_of(folder.name) is None and not ids.is_file():
            atomic_write(ids, json.dumps({"user_id": tenant.user_id, "agent_id": tenant.agent_id}) + "\n")
        return folder

    def tenants(self) -> list[Tenant]:
        """Tenants with a profile folder, by folder name."""
        if not self.root.is_dir():
            return []
        found = []
        for p in sorted(self.root.iterdir()):
            if p.is_symlink() or not p.is_dir():
                continue
            tenant = tenant_of(p.name) or _hashed_tenant(p)
            if tenant is not None:
                found.append(tenant)
        return found


def remove_tree(path: Path) -> int:
    """Delete ``path`` (a file, or a folder and everything in it, symlinks as links); returns the
    files removed. Raises ``StorageError``."""
    if not path.exists() and not path.is_symlink():
        return 0
    with storage_errors(path):
        if path.is_symlink() or not path.is_dir():
            path.unlink()
            return 1
        files = sum(1 for p in path.rglob("*") if not p.is_dir() or p.is_symlink())
        shutil.rmtree(path)
    return files


def tenant_of(folder: str) -> Tenant | None:
    """The tenant of a profile folder name ``u=<user>,a=<agent>``, or None for any other name."""
    user, sep, agent = folder.partition(",a=")
    if not sep or not user.startswith("u="):
        return None
    tenant = Tenant(unquote(user[2:]), unquote(agent))
    return tenant if tenant.folder == folder else None


def _hashed_tenant(folder: Path) -> Tenant | None:
    """The tenant a hash-named folder's ``tenant.json`` names (None when it does not hold one)."""
    if "#" not in folder.name:
        return None
    ids = folder / ".metadata" / TENANT_FILE
    try:
        doc = json.loads(ids.read_text(encoding="utf-8"))
        tenant = Tenant(str(doc["user_id"]), str(doc["agent_id"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("profile folder %s: cannot read its tenant from %s: %s", folder, ids, exc)
        return None
    if tenant.folder != folder.name:
        log.warning("profile folder %s: %s names another tenant's folder; skipped", folder, ids)
        return None
    return tenant


def mtime_ms(p: Path) -> int:
    return p.stat().st_mtime_ns // 1_000_000
