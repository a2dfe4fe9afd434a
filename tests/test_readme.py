"""Every Python snippet in the README runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_snippets():
    assert len(SNIPPETS) >= 2


@pytest.mark.parametrize("number", range(len(SNIPPETS)))
def test_readme_snippet_runs(number, capsys):
    exec(compile(SNIPPETS[number], f"README snippet {number}", "exec"), {})
    assert capsys.readouterr().out.strip()


def test_readme_links_only_inside_the_repository():
    text = README.read_text()
    assert not re.findall(r"\bhttps?://|\bwww\.", text), "the README must not link outside the repository"
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        assert (README.parent / target).exists(), f"README links to {target}, which is not in the repository"
