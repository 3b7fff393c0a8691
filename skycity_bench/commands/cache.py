"""`skycity-bench cache …`: the pinned offline library cache.

cache add PKG@VER [PKG@VER …]   fetch from the npm registry, verify, store
cache list                      what is cached
cache remove PKG@VER            forget a release (and the files only it used)
cache seed FILE                 add every PKG@VER listed in FILE (the set-up uses it)
cache verify                    re-hash every cached file
cache prefetch PATH [PATH …]    add every release the demos (files, folders, globs) name
                                that the cache lacks (batches do it while planning)
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from skycity_bench.common.errors import UserError


def _store():
    from skycity_bench.cache.package_store import LibraryCache

    return LibraryCache()


def _add_all(specs: list[str], force: bool, c: Console) -> list[str]:
    """Add each spec; returns the ones that failed (with why), never stopping at the first."""
    from skycity_bench.cache import npm
    from skycity_bench.cache.package_store import CacheError

    store = _store()
    failed = []
    for spec in specs:
        try:
            rel, fetched = npm.add(store, spec, force=force)
        except CacheError as e:
            failed.append(f"{spec}: {e}")
            c.print(f"[red]{spec}: {e}[/]", highlight=False)
            continue
        if fetched:
            c.print(
                f"added {rel.spec}: {len(rel.files)} files, {rel.size / 1e6:.1f} MB, {rel.integrity[:30]}…",
                highlight=False,
            )
        else:
            c.print(f"{rel.spec} is already cached", highlight=False)
    return failed


def read_seed(path: Path) -> list[str]:
    """PKG@VER per line; '#' starts a comment; blank lines are skipped."""
    if not path.is_file():
        raise UserError(f"seed file not found: {path}")
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.extend(line.split())
    return out


def add(
    specs: list[str] = typer.Argument(
        ..., help="PKG@VERSION, e.g. three@0.160.0 (ranges and tags resolve on the registry)"
    ),
    force: bool = typer.Option(False, "--force", help="fetch again even when cached"),
) -> None:
    """Fetch packages from the npm registry into the cache, verifying dist.integrity."""
    c = Console()
    c.print(f"[dim]cache: {_store().root}[/]", highlight=False)
    if _add_all(specs, force, c):
        raise typer.Exit(1)


def seed(file: Path = typer.Argument(..., help="a file of PKG@VERSION lines (scripts/cache-seed.txt)")) -> None:
    """Add every release a seed file lists (already cached ones need no network)."""
    c = Console(stderr=True)
    specs = read_seed(file)
    failed = _add_all(specs, False, c)
    if failed:
        c.print(f"[yellow]cache seed: {len(failed)} of {len(specs)} could not be added[/]")
        raise typer.Exit(1)


def prefetch(
    paths: list[str] = typer.Argument(
        ..., metavar="PATH...", help="demo HTML files, folders of them, or globs (as `run` takes)"
    ),
) -> None:
    """Scan demos for the CDN releases they name and fetch those the cache lacks (integrity-checked)."""
    from skycity_bench.batch.batch_run import discover
    from skycity_bench.cache.ondemand import prefetch_demos

    c = Console()
    files, notes = discover(paths)
    for n in notes:
        c.print(f"[yellow]{n}[/]", highlight=False, soft_wrap=True)

    def say(rec: dict) -> None:
        if rec["outcome"] == "fetched":
            c.print(
                f"added {rec['package']}@{rec['version']}: {rec['files']} files, {rec['bytes'] / 1e6:.1f} MB, "
                f"{rec['integrity'][:30]}…",
                highlight=False,
                soft_wrap=True,
            )
        elif rec["outcome"] != "unreachable":
            c.print(f"[red]{rec['detail']}[/]", highlight=False, soft_wrap=True)

    od, names = prefetch_demos(files, "by `cache prefetch`", log=say, enabled=True)
    unreachable = [r for r in od.records if r["outcome"] == "unreachable"]
    if unreachable:
        c.print(
            f"[red]the npm registry is unreachable ({unreachable[0]['detail']}): not cached: "
            f"{', '.join(r['package'] + ('@' + r['spec'] if r['spec'] else '') for r in unreachable)}[/]",
            highlight=False,
            soft_wrap=True,
        )
    fetched = sum(r["outcome"] == "fetched" for r in od.records)
    c.print(
        f"{len(files)} demo(s) name {len(names)} release(s): {fetched} fetched, "
        f"{len(names) - len(od.records)} already cached, {len(od.records) - fetched} not cached",
        highlight=False,
    )
    if len(od.records) > fetched:
        raise typer.Exit(1)


def list_() -> None:
    """The cached releases."""
    store = _store()
    rels = store.releases()
    c = Console()
    if not rels:
        c.print(
            f"the offline cache at {store.root} is empty: add releases with `skycity-bench cache add three@0.160.0`",
            highlight=False,
        )
        return
    t = Table(title=f"offline library cache — {store.root}")
    for col in ("package", "version", "files", "MB", "integrity", "fetched"):
        t.add_column(col, justify="right" if col in ("files", "MB") else "left")
    for r in rels:
        t.add_row(
            r.name, r.version, str(len(r.files)), f"{r.size / 1e6:.1f}", r.integrity[:24] + "…", r.fetched_at[:10]
        )
    c.print(t)


def remove(spec: str = typer.Argument(..., help="PKG@VERSION (exact)")) -> None:
    """Forget a cached release and delete the files no other release shares."""
    from skycity_bench.cache import npm, semver
    from skycity_bench.cache.package_store import CacheError

    try:
        name, version = npm.split_spec(spec)
    except CacheError as e:
        raise UserError(str(e)) from None
    if not semver.is_exact(version):
        raise UserError(f"cache remove needs an exact version, e.g. {name}@0.160.0")
    try:
        freed = _store().remove(name, version)
    except CacheError as e:
        raise UserError(str(e)) from None
    Console().print(f"removed {name}@{version} ({freed} files no other release used)", highlight=False)


def verify() -> None:
    """Re-hash every cached file; exit 1 listing the corrupt or missing ones."""
    problems = _store().verify()
    c = Console()
    for p in problems[:50]:
        c.print(f"[red]{p}[/]", highlight=False)
    if problems:
        c.print(f"{len(problems)} problem(s): `skycity-bench cache add --force PKG@VER` fetches a release again")
        raise typer.Exit(1)
    c.print("every cached file matches its checksum")


def register(app: typer.Typer) -> None:
    cache = typer.Typer(no_args_is_help=True, help="The offline library cache demos' CDN imports are served from.")
    app.add_typer(cache, name="cache")
    cache.command("add")(add)
    cache.command("seed")(seed)
    cache.command("prefetch")(prefetch)
    cache.command("list")(list_)
    cache.command("remove")(remove)
    cache.command("verify")(verify)
