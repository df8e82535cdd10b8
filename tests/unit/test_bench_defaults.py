"""The benches' defaults are the code's: a bench that compares against today's figure reads today's
constants instead of a copy of them, which fell behind once (fusion_loo's ``--default``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from memstrata.retrieval import fusion
from memstrata.retrieval.presets import HYBRID
from memstrata.settings import SearchSettings

BENCH = Path(__file__).resolve().parents[2] / "bench"


def bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fusion_loo_compares_with_the_fusion_constants_search_uses(monkeypatch: pytest.MonkeyPatch) -> None:
    loo = bench("fusion_loo")
    top, full, power, k, depth, findings, instructions, instruction_full = loo.code_point().split(",")
    assert (int(top), float(full), float(power)) == (fusion.AGREE_TOP, fusion.AGREE_FULL, fusion.AGREE_POWER)
    assert (float(k), int(depth)) == (SearchSettings().rrf_k, SearchSettings().candidates)
    assert (int(findings), int(instructions)) == (int(HYBRID.findings), fusion.INSTRUCTION_TOP)
    assert float(instruction_full) == fusion.INSTRUCTION_FULL
    monkeypatch.setattr(fusion, "AGREE_TOP", fusion.AGREE_TOP + 1)  # a constant moved: so does the default
    assert loo.code_point().split(",")[0] == str(fusion.AGREE_TOP)
