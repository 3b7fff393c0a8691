"""No tracker numbers in the repository's text: a comment, docstring, fixture or document says
what the code does and why, never which tracker issue asked for it. Every text file git
tracks is read (the working copy), changelogs aside: a changelog may name what it records."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PATTERN = re.compile(r"\b[Ii]ssues? #?\d+")
SUFFIXES = {".py", ".md", ".js", ".html", ".yaml", ".yml", ".sh", ".toml", ".txt", ".json", ".css"}


def numbers_in(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line of `text` that names a tracker number."""
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1) if PATTERN.search(line)]


def _tracked_text_files() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"not a git checkout, so no list of tracked files: {e}")
    paths = [p for p in out.decode("utf-8").split("\0") if p]
    return [
        p
        for p in paths
        if Path(p).suffix in SUFFIXES
        and "changelog" not in Path(p).name.lower()
        and not p.startswith(".venv/")
        and (ROOT / p).is_file()
    ]


def _hits() -> list[tuple[str, int, str]]:
    return [
        (p, n, line)
        for p in _tracked_text_files()
        for n, line in numbers_in((ROOT / p).read_text(encoding="utf-8", errors="replace"))
    ]


def test_the_number_finder_finds_a_planted_number_and_leaves_plain_words():
    word = "issue"  # the examples are put together here, so that this file names no number itself
    planted = [f"# the tour pass ({word} 18 part 1)", f"an {word.title()} #19: the queue", f"({word}s 2 and 15)"]
    text = "\n".join(["plain text", *planted, "tissue 5 is not a tracker number, nor is an issue without one"])
    assert numbers_in(text) == [(2, planted[0]), (3, planted[1]), (4, planted[2])]
    assert numbers_in("the issue's target, issues of timing, 16 issues") == []


def test_tracked_text_names_no_tracker_numbers():
    hits = [f"{p}:{n}: {line}" for p, n, line in _hits()]
    assert not hits, f"{len(hits)} lines name a tracker number; say what and why instead:\n" + "\n".join(hits)
