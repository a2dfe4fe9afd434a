"""Assemble the corpus of peers' real captures from fetched mirrors (``tests/corpus_manifest.json``).

The corpus is other projects' test data: it is never committed here. The
manifest names each file (repository, path, commit) with its sha256; this tool
copies each named file out of a bare git mirror of its repository
(``git show <commit>:<path>``), checks its sha256 and writes it to
``<out>/<owner>+<name>/<path>``, where ``tests/test_corpus.py`` looks for it.
It builds no code.

    python tools/corpus.py --out /work/corpus [--mirrors /work/.mirror]

A mirror is ``<mirrors>/<owner>+<name>/repo`` (as the fetch tool leaves it) or
``<mirrors>/<owner>+<name>`` itself; bring one with ``git clone --mirror``
where there is none. A missing mirror or commit is reported and the other
files are still copied.

>>> mirror_candidates(Path("/m"), "apache/paimon")
[PosixPath('/m/apache+paimon/repo'), PosixPath('/m/apache+paimon')]
>>> corpus_path(Path("/c"), {"repo": "eulerto/wal2json", "path": "expected/pk.out"})
PosixPath('/c/eulerto+wal2json/expected/pk.out')
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "tests" / "corpus_manifest.json"


def load_manifest(path: Path = MANIFEST) -> list[dict[str, Any]]:
    """The manifest's entries (one per file)."""
    return list(json.loads(path.read_text(encoding="utf-8"))["files"])


def mirror_candidates(mirrors: Path, repo: str) -> list[Path]:
    """Where the bare mirror of ``repo`` (``owner/name``) may be under ``mirrors``."""
    folder = mirrors / repo.replace("/", "+")
    return [folder / "repo", folder]


def corpus_path(out: Path, entry: dict[str, Any]) -> Path:
    """Where the file of a manifest entry lies in the corpus folder ``out``."""
    return out / entry["repo"].replace("/", "+") / entry["path"]


def file_at(git_dir: Path, commit: str, path: str) -> bytes | None:
    """The bytes of ``path`` at ``commit`` in the git directory, or None where it is not there."""
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], capture_output=True, check=False
    )
    return done.stdout if done.returncode == 0 else None


def assemble(out: Path, mirrors: Path, entries: list[dict[str, Any]]) -> list[str]:
    """Copy every entry's file into ``out``; the problems, one line each (empty when all were copied)."""
    problems = []
    for entry in entries:
        name = f"{entry['repo']}:{entry['path']}@{entry['commit'][:12]}"
        data = None
        for git_dir in mirror_candidates(mirrors, entry["repo"]):
            if git_dir.is_dir():
                data = file_at(git_dir, entry["commit"], entry["path"])
                if data is not None:
                    break
        if data is None:
            problems.append(f"{name}: no mirror holds it (fetch {entry['repo']} under {mirrors})")
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest != entry["sha256"]:
            problems.append(f"{name}: sha256 {digest} is not the manifest's {entry['sha256']}")
            continue
        target = corpus_path(out, entry)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return problems


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--out`` the corpus folder, ``--mirrors`` the folder of bare mirrors."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the corpus folder to write")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"), help="folder of bare git mirrors")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    args = parser.parse_args(argv)
    entries = load_manifest(args.manifest)
    problems = assemble(args.out, args.mirrors, entries)
    for line in problems:
        print(line, file=sys.stderr)
    print(f"{len(entries) - len(problems)} of {len(entries)} files in {args.out}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
