"""The MkDocs hook that writes the generated pages into the build (see ``docs/hooks/pages.py``).

The dialect pages, the landing page (the README) and the API reference are added as files; the notebooks
are added from ``notebooks/`` before mkdocs-jupyter looks for them; ``<!-- generated: NAME -->`` lines of
the written pages (the CLI help, the frame's columns) are filled in. Nothing is written to the repository.
"""

from __future__ import annotations

import importlib.util
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
    for notebook in pages.notebooks():
        # A file of the repository outside docs/ (mkdocs-jupyter reads it from its path, so not File.generated).
        files.append(File(f"notebooks/{notebook.name}", src_dir=str(pages.ROOT), dest_dir=config.site_dir,
                          use_directory_urls=config.use_directory_urls))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri.startswith("specs/"):
        return pages.citations(markdown)
    return pages.fill(markdown)
