"""No module outside the language seam holds a language's rules: no CJK characters or CJK ranges
in its code and no language code as a literal (a branch on ``lang == "zh"``, a table keyed by
language). The seam is ``memstrata/lang`` (the packs and their registry) and the offline engine's
own packs (``engines/offline/lang``); docstrings and comments may name languages and give examples.

What is left outside is listed in ``KNOWN`` with the reason: the list only shrinks (a module that
no longer holds a language rule must leave it, so it cannot hide a new one)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import memstrata

SRC = Path(memstrata.__file__).resolve().parent
SEAM = ("lang/", "engines/offline/lang/")
# Han (and its extensions), kana, Hangul and CJK punctuation (the ideographic space is whitespace).
_CJK = re.compile(r"[\u3001-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
# Language codes as literals: a branch or a table keyed by language.
_CODES = frozenset({"zh", "en", "ja", "ko", "zh-cn", "zh-tw", "chinese", "english"})

# module -> why its language literals are not (yet) a pack's.
KNOWN: dict[str, str] = {
    "cli/demo_cmd.py": "the demo's scripted questions, one set per bundled conversation (data)",
    "demo/__init__.py": "the bundled demo conversations, one per language (data)",
    "engines/llm/language.py": "the LLM engine names a conversation's script to the model, by Unicode name",
    "engines/offline/l1/subject.py": "the English suffix -en of the English subject rules, not a code",
    "interchange/tdai/read.py": "the TDAI format's own navigation heading (a format, not a rule)",
}


def _docstrings(tree: ast.AST) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _is_language(value: str) -> bool:
    if value.strip().lower() in _CODES or _CJK.search(value):
        return True
    return any(_CJK.match(chr(int(code, 16))) for code in _ESCAPE.findall(value))


def language_literals(path: Path) -> list[tuple[int, str]]:
    """``(line, literal)`` of every string literal of ``path`` (docstrings aside) that names a
    language or holds a CJK character or range."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skip
        and _is_language(node.value)
    ]


def outside_the_seam() -> dict[str, list[tuple[int, str]]]:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        name = path.relative_to(SRC).as_posix()
        if name.startswith(SEAM):
            continue
        hits = language_literals(path)
        if hits:
            found[name] = hits
    return found


def test_no_module_outside_the_seam_holds_a_language_rule() -> None:
    found = outside_the_seam()
    new = {name: hits for name, hits in found.items() if name not in KNOWN}
    assert not new, f"language rules outside memstrata/lang (put them in a pack): {new}"


def test_the_known_list_only_shrinks() -> None:
    gone = sorted(set(KNOWN) - set(outside_the_seam()))
    assert not gone, f"no longer hold a language rule, drop them from KNOWN: {gone}"


def test_the_scan_sees_a_branch_and_a_range(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""Says 中文 in its docstring."""\nimport re\nR = re.compile(r"[\\u4e00-\\u9fff]")\n'
        'def f(lang):\n    return "用户" if lang == "zh" else "user"\n',
        encoding="utf-8",
    )
    assert [line for line, _ in language_literals(module)] == [3, 5, 5]
