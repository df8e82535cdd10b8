"""``import memstrata`` loads no framework and no adapter: each adapter costs only who imports it."""

from __future__ import annotations

import subprocess
import sys

FRAMEWORKS = ("memstrata.integrations.", "langgraph", "langchain_core", "agents", "pydantic_ai", "openai")


def _loaded(code: str) -> list[str]:
    probe = (
        f"{code}; import sys; print(' '.join(sorted(m for m in sys.modules if m.startswith({FRAMEWORKS!r}))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return out.stdout.split()


def test_import_memstrata_loads_no_framework() -> None:
    assert _loaded("import memstrata; from memstrata import Memory, AsyncMemory") == []


def test_the_integrations_package_loads_no_framework_until_an_adapter_is_imported() -> None:
    assert _loaded("import memstrata.integrations") == []
    loaded = _loaded("import memstrata.integrations.pydantic_ai")
    assert "pydantic_ai" in loaded
    assert not any(m.startswith(("langgraph", "agents")) for m in loaded)
