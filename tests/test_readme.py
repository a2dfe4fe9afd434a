"""The README is the landing page: short, its examples run, its dialect list is the registry's, and it
links only into the repository (into the documentation pages under docs/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_snippets import python_snippets, run_snippet

import cdckit

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TEXT = README.read_text()
SNIPPETS = python_snippets(TEXT)


def test_readme_is_a_landing_page():
    assert len(TEXT.splitlines()) < 150, "long explanations belong in docs/"
    assert "make demo" in TEXT and "make test" in TEXT and "make docs" in TEXT


def test_readme_begins_with_a_file_of_ones_own():
    first = SNIPPETS[0]
    assert len(first.strip().splitlines()) <= 12
    for call in ("cdckit.detect(path)", "cdckit.read(path)", "cdckit.quarantine(", "cdckit.materialize(", "write_events("):
        assert call in first, call


@pytest.mark.parametrize("number", range(len(SNIPPETS)))
def test_readme_snippet_runs(number, capsys, tmp_path):
    run_snippet(SNIPPETS[number], tmp_path, f"README snippet {number}")
    assert capsys.readouterr().out.strip()


def test_readme_lists_every_dialect():
    section = TEXT[TEXT.index("## Dialects"):]
    listed = re.findall(r"^\| `(\w+)` \|", section, flags=re.M)
    assert sorted(listed) == sorted(cdckit.dialects.names())


def test_readme_links_only_inside_the_repository():
    assert not re.findall(r"\bhttps?://|\bwww\.", TEXT), "the README must not link outside the repository"
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", TEXT)
    assert any(t.startswith("docs/") for t in targets)
    for target in targets:
        assert (README.parent / target).exists(), f"README links to {target}, which is not in the repository"
