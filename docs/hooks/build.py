"""The MkDocs hook that writes the generated pages into the build (see ``docs/hooks/pages.py``).

The dialect pages, the landing page (the README) and the API reference are added as files; the notebooks
are added from ``notebooks/`` before mkdocs-jupyter looks for them; ``<!-- generated: NAME -->`` lines of
the written pages (the CLI help, the frame's columns) are filled in. Nothing is written to the repository.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import tempfile
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

_spec = importlib.util.spec_from_file_location("cdckit_docs_pages", Path(__file__).with_name("pages.py"))
pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pages)


@event_priority(50)  # before mkdocs-jupyter's on_files, which turns .ipynb files into pages
def on_files(files: Files, config) -> Files:
    for path, markdown in pages.pages().items():
        if files.get_file_from_path(path) is not None:
            raise ValueError(f"docs/{path} is generated at build time: remove the written file")
        files.append(File.generated(config, path, content=markdown))
    # mkdocs-jupyter reads a notebook from its path (so not File.generated): the site's copy of each (its
    # figures drawn by the site's plotly.js, its widgets as a picture) is written to a folder of its own
    # outside the repository, removed when the build ends
    global _COPIES
    _COPIES = Path(tempfile.mkdtemp(prefix="cdckit-site-notebooks-"))
    (_COPIES / "notebooks").mkdir()
    for notebook in pages.notebooks():
        shown = pages.site_notebook(json.loads(notebook.read_text(encoding="utf-8")))
        (_COPIES / "notebooks" / notebook.name).write_text(json.dumps(shown, ensure_ascii=False), encoding="utf-8")
        files.append(File(f"notebooks/{notebook.name}", src_dir=str(_COPIES), dest_dir=config.site_dir,
                          use_directory_urls=config.use_directory_urls))
    files.append(File.generated(config, pages.PLOTLY_ASSET, content=pages.plotly_bundle()))
    return files


_COPIES: Path | None = None


def on_post_build(config) -> None:
    if _COPIES is not None:
        shutil.rmtree(_COPIES, ignore_errors=True)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri.startswith("specs/"):
        return pages.citations(markdown)
    return pages.fill(markdown)
