"""Settings: arguments over environment over ``<data dir>/memstrata.toml`` over defaults; every
misspelt or unknown name, in the file or the environment, is a ConfigError naming the nearest one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.errors import ConfigError
from memstrata.settings import OTHER_VARIABLES, env_name, load_settings, setting_names

TOML = """
[search]
rrf_k = 42
[pipeline]
window_size = 3
every_n_conversations = 7
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("MEMSTRATA_HOME", "MEMSTRATA_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "data"
    home.mkdir()
    (home / "memstrata.toml").write_text(TOML)
    return home


def test_memory_open_reads_the_data_directorys_file(home: Path) -> None:
    with Memory.open(home, embedder=None) as mem:
        assert mem.settings.search.rrf_k == 42
        assert mem.settings.pipeline.window_size == 3


def test_environment_beats_the_file_and_arguments_beat_both(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTRATA_SEARCH__RRF_K", "7")
    monkeypatch.setenv("MEMSTRATA_PIPELINE__WINDOW_SIZE", "4")
    s = load_settings(home, pipeline={"window_size": 5})
    assert s.search.rrf_k == 7  # environment over file
    assert s.pipeline.window_size == 5  # argument over environment
    assert s.pipeline.every_n_conversations == 7  # the file over the default
    assert s.pipeline.l2_batch_size == 50  # the default


def test_memstrata_config_names_another_file(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other.toml"
    other.write_text("[search]\nrrf_k = 5\n")
    monkeypatch.setenv("MEMSTRATA_CONFIG", str(other))
    assert load_settings(home).search.rrf_k == 5


@pytest.mark.parametrize(
    ("variable", "nearest"),
    [
        ("MEMSTRATA_PIPELINE__ENIGNE", "MEMSTRATA_PIPELINE__ENGINE"),
        ("MEMSTRATA_EMBEDING__PROVIDER", "MEMSTRATA_EMBEDDING__PROVIDER"),
        ("memstrata_search__rrfk", "MEMSTRATA_SEARCH__RRF_K"),
        ("MEMSTRATA_HOMEDIR", "MEMSTRATA_HOME"),
    ],
)
def test_a_misspelt_variable_is_refused_with_the_nearest_name(
    home: Path, monkeypatch: pytest.MonkeyPatch, variable: str, nearest: str
) -> None:
    monkeypatch.setenv(variable, "llm")
    with pytest.raises(ConfigError, match=f"{variable}' is not a setting; did you mean '{nearest}'"):
        load_settings(home)


def test_a_variable_like_nothing_known_is_refused_without_a_guess(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTRATA_XYZZY", "1")
    with pytest.raises(ConfigError, match="'MEMSTRATA_XYZZY' is not a setting \\(see"):
        load_settings(home)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[pipeline]\nenigne = 'llm'\n",
            "'pipeline.enigne' is not a setting; did you mean 'pipeline.engine'",
        ),
        ("serch = 1\n", "'serch' is not a setting; did you mean 'search'"),
        ("[search\n", "cannot read settings file"),
    ],
)
def test_an_unknown_or_broken_file_is_refused(home: Path, text: str, message: str) -> None:
    (home / "memstrata.toml").write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        Memory.open(home, embedder=None)
    assert str(home / "memstrata.toml") in str(info.value)


def test_a_value_of_the_wrong_type_is_a_config_error(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTRATA_PIPELINE__WINDOW_SIZE", "ten")
    with pytest.raises(ConfigError, match=r"invalid setting pipeline\.window_size: .* \(got 'ten'\)"):
        load_settings(home)


def test_a_misspelt_argument_is_refused_with_the_nearest_name(home: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"'pipeline\.windowsize' is not a setting; did you mean 'pipeline\.window_size'"
    ):
        load_settings(home, pipeline={"windowsize": 5})


def test_every_variable_of_the_readme_table_is_a_setting() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    valid = {env_name(n) for n in setting_names()} | OTHER_VARIABLES
    table = [line for line in readme.splitlines() if line.startswith("| `MEMSTRATA_")]
    documented = set(re.findall(r"MEMSTRATA_[A-Z0-9_]*[A-Z0-9]", "\n".join(table)))
    assert len(documented) > 5 and documented <= valid
