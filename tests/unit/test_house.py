"""The shape of the package, checked from its source: no import circle (module-level,
function-level and TYPE_CHECKING imports all count), folders by phase with almost nothing at
the root, one meaning per file name, functions that fit a screen, and documents that stand
on their own (no pointers outside the repository, no tracker numbers)."""

from __future__ import annotations

import ast
import re
import subprocess
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "skycity_bench"
MAX_FUNCTION_LINES = 60
# A file name may repeat only for the same item in parallel phases: a probe, its evidence
# model and its scorer (and a package's __init__).
PARALLEL_PHASES = {
    "__init__",
    "density",
    "frame_pacing",
    "framing",
    "packaging",
    "playback",
    "shops",
    "timeline",
    "recording",
    "realtime_capture",
    "network",
}


def _modules() -> dict[str, Path]:
    mods = {}
    for p in PKG.rglob("*.py"):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    return mods


def _targets(mod: str, node: ast.Import | ast.ImportFrom, is_pkg: bool, mods: dict[str, Path]) -> set[str]:
    """The package modules one import statement loads (the deepest module each name names)."""
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
            pkg = pkg[: len(pkg) - (node.level - 1)]
            base = ".".join(pkg + ([base] if base else []))
        for a in node.names:
            names.append(f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base)
    out = set()
    for name in names:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        if name and name != mod:
            out.add(name)
    return out


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        edges: set[str] = set()
        for node in ast.walk(tree):  # every import, wherever it sits
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= _targets(mod, node, path.name == "__init__.py", mods)
        graph[mod] = edges
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_circle_finder_finds_a_planted_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]


def test_the_package_has_no_import_circle():
    found = circles(import_graph())
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_only_the_entry_points_sit_at_the_package_root():
    root_modules = sorted(p.name for p in PKG.glob("*.py"))
    assert root_modules == ["__init__.py", "__main__.py", "cli.py"]


def test_a_file_name_means_one_thing():
    where = defaultdict(list)
    for p in PKG.rglob("*.py"):
        if "migrations" not in p.parts:
            where[p.stem].append(str(p.relative_to(PKG)))
    twice = {name: paths for name, paths in where.items() if len(paths) > 1 and name not in PARALLEL_PHASES}
    assert not twice, f"file names used for different things: {twice}"


def test_no_function_is_longer_than_a_screen():
    long = []
    for p in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{p.relative_to(ROOT)}:{node.lineno} {node.name} ({n} lines)")
    assert not long, "functions over 60 lines:\n" + "\n".join(sorted(long))


def _documents() -> list[Path]:
    docs = [ROOT / "README.md", *PKG.rglob("*.py"), *PKG.rglob("*.js"), *PKG.rglob("*.html")]
    docs += list((ROOT / "docs").rglob("*.md")) if (ROOT / "docs").exists() else []
    return docs


# A tracker number: what a comment, docstring, fixture or page should say in words instead.
TRACKER_NUMBER = re.compile(r"\b[Ii]ssues? #?\d+")
TEXT_SUFFIXES = {".py", ".md", ".js", ".html", ".yaml", ".yml", ".sh", ".toml", ".txt", ".json", ".css"}


def numbers_in(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line of `text` that names a tracker number."""
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1) if TRACKER_NUMBER.search(line)]


def _tracked_text() -> list[Path]:
    """Every text file git tracks (tests, fixtures, benchmarks and scripts as well as the
    package and its pages); outside a git checkout, the package and its pages."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return _documents()
    paths = [ROOT / p for p in out.decode("utf-8").split("\0") if p]
    return [p for p in paths if p.suffix in TEXT_SUFFIXES and p.is_file()]


def test_the_number_finder_finds_a_planted_number_and_leaves_plain_words():
    word = "issue"  # put together here, so that this file names no number itself
    planted = [f"# the tour pass ({word} 18 part 1)", f"an {word.title()} #19: the queue", f"({word}s 2 and 15)"]
    text = "\n".join(["plain text", *planted, "tissue 5 is not a tracker number, nor is an issue without one"])
    assert [line for _, line in numbers_in(text)] == planted
    assert numbers_in("the issue's target, issues of timing, 16 issues") == []


def test_tracked_text_names_no_tracker_numbers():
    hits = [
        f"{p.relative_to(ROOT)}:{n}: {line}"
        for p in _tracked_text()
        for n, line in numbers_in(p.read_text("utf-8", "replace"))
    ]
    assert not hits, f"{len(hits)} lines name a tracker number; say what and why instead:\n" + "\n".join(hits)


def test_nothing_points_outside_the_repository():
    hits = [str(p.relative_to(ROOT)) for p in _documents() if "../shared" in p.read_text("utf-8")]
    assert not hits, f"pointers to ../shared in {hits}"
