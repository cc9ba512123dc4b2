"""The documentation stands on its own: no file points outside the repository, and the examples work.

The rules and the state format live in ``docs/rules.md`` and ``docs/state_format.md``; a clone of the
repository has nothing beside it, so no tracked text file may refer to documents outside it.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from solitaire_env import Game

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("docs/rules.md", "docs/state_format.md")
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".cfg", ".ini", ".txt", ".sh", ".json"}
# Written in pieces so that this file does not match itself. The last two are the bare names of the
# documents that used to sit outside the repository: they point nowhere in a clone.
FORBIDDEN = (
    "../" + "shared",
    "shared/" + "RULES",
    "shared/" + "STATE_" + "FORMAT",
    "RULES" + ".md",
    "STATE_" + "FORMAT",
)


def tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, text=True, check=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError):
        pytest.skip("not a git checkout (or no git): the tracked files are unknown")
    names = [n for n in out.split("\0") if n]
    files = [
        ROOT / n
        for n in names
        if Path(n).suffix in TEXT_SUFFIXES or n.startswith(".ci/") or n in (".gitignore", ".gitattributes")
    ]
    return [f for f in files if f.is_file()]


def test_no_tracked_file_refers_to_documents_outside_the_repository():
    files = tracked_text_files()
    assert any(f.name == "README.md" for f in files)
    hits = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            hits += [f"{path.relative_to(ROOT)}:{number}: {word}" for word in FORBIDDEN if word in line]
    assert not hits, "references to files outside the repository:\n" + "\n".join(hits)


@pytest.mark.parametrize("doc", DOCS)
def test_the_rules_and_the_state_format_are_documented_and_linked_from_the_readme(doc):
    assert (ROOT / doc).is_file()
    assert f"]({doc})" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_relative_links_in_markdown_lead_to_files_inside_the_repository():
    broken = []
    for path in tracked_text_files():
        if path.suffix != ".md":
            continue
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text(encoding="utf-8")):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a URL or an anchor on the same page
            linked = (path.parent / target.split("#")[0]).resolve()
            if not linked.is_relative_to(ROOT) or not linked.exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert not broken, "links that lead nowhere or out of the repository:\n" + "\n".join(broken)


def state_format_examples() -> list[dict]:
    text = (ROOT / "docs/state_format.md").read_text(encoding="utf-8")
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", text, flags=re.S)]


def test_state_format_examples_are_valid_states():
    examples = state_format_examples()
    assert {e["variant"] for e in examples} == {"rainbow", "number_ten"}
    for state in examples:
        assert Game.from_state(state).get_state() == state  # valid, and exactly as get_state writes it


def test_the_rainbow_example_is_deal_3():
    (rainbow,) = [e for e in state_format_examples() if e["variant"] == "rainbow"]
    assert rainbow == Game("rainbow", seed=3).get_state()


# A commit hash (7-40 hex digits with a letter and a digit), an issue number, a date: history, which goes
# to CHANGELOG.md, not into the reference pages.
HISTORY = re.compile(
    r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b|\bissue #?\d+|#\d{2,}\b|\b20\d\d-\d\d-\d\d\b",
    re.IGNORECASE,
)


def test_reference_pages_carry_no_history():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert any(p.name == "baselines.md" for p in pages)
    hits = []
    for path in pages:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            hits += [f"{path.relative_to(ROOT)}:{number}: {m.group(0)}" for m in HISTORY.finditer(line)]
    assert not hits, "commit hashes, issue numbers or dates in reference pages (history goes to CHANGELOG.md):\n" + \
        "\n".join(hits)
