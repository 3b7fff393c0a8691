"""Any CDN version, on demand: before a run, the releases a demo names that the
cache lacks are fetched from the npm registry (integrity-checked, exactly as `cache add`),
so a demo pinning an unseeded three.js is measured like one pinning a seeded release.

What a demo names is read from its HTML by the packaging audit (analysis/html_audit.py:
import maps, script src, static and dynamic imports, link href ... with literal URLs) and
matched against the one CDN table (cdn.py); a name is "missing" when the resolver's own
rule (resolver.CacheResolver.pick_version) finds no cached release for it. Nothing here
parses HTML or URLs a second way.

Outcomes, one record per missing name (the report keeps them in probes.network.data):
  fetched          added to the cache before the run; the run's report says so, and every
                   file served from it is marked `fetched_for_this_run` (reproducibility:
                   the next run finds it cached, the same bytes by their sha256)
  not_on_registry  the registry has no such package or no release matching the version
  integrity        the tarball failed its integrity check: nothing was stored
  error            another reason the release could not be cached (e.g. an unsafe tarball)
  unreachable      no answer from the registry: the run keeps the offline message unchanged
  skipped          past the run's limits (MAX_FETCHES_PER_RUN, FETCH_BUDGET_S): not tried
For the three failures that are not "unreachable", the request the page makes is blocked
(charged as any missing dependency) and its one line says why it could not be fetched.

Requests only seen at run time (a URL the page computes, a dependency an ES-module CDN
file imports) are not fetched mid-run: a run measures one frozen cache, so every probe of
a report sees the same library bytes. They are fetched after the probes (when fetching is
on), and the run's warning says to run again; `cache prefetch` does the same ahead of time.

Fetching is on by default and off with `run --no-fetch` or SKYCITY_NO_FETCH=1 (operators
who want the cache frozen); then a missing release gets the offline message.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

from skycity_bench.cache import cdn, npm
from skycity_bench.cache.package_store import CacheError, LibraryCache
from skycity_bench.cache.resolver import CacheResolver

# The registry's first answer (the package document) within this, else the registry counts
# as unreachable for the rest of the run: an offline machine must not wait a minute a name.
REGISTRY_TIMEOUT_S = 15.0
# A demo imports one to three libraries; one naming dozens of missing releases is noise or
# hostile (every fetch costs time, disk and the registry's goodwill), so a run fetches at most
# this many and spends at most this long fetching; the rest are blocked, each with its line.
MAX_FETCHES_PER_RUN = 10
FETCH_BUDGET_S = 180.0
NO_FETCH_ENV = "SKYCITY_NO_FETCH"


def fetch_enabled() -> bool:
    """False when the operator froze the cache (`run --no-fetch` sets SKYCITY_NO_FETCH=1)."""
    return os.environ.get(NO_FETCH_ENV, "").strip().lower() not in ("1", "true", "yes", "on")


@dataclass
class Named:
    """A package and version (as written) that a demo's CDN URLs name."""

    package: str
    spec: str
    urls: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str]:
        return (self.package, self.spec)

    @property
    def text(self) -> str:
        """What `cache add` takes: PKG@SPEC, or PKG alone (its latest release)."""
        return f"{self.package}@{self.spec}" if self.spec else self.package

    @property
    def what(self) -> str:
        """As the resolver's miss messages write it."""
        return f"{self.package}@{self.spec}" if self.spec else f"{self.package} (no version in the URL)"


def named_in_html(text: str) -> list[Named]:
    """Every package@version the demo's literal CDN URLs name, in the order first seen."""
    from skycity_bench.analysis.html_audit import audit

    # The audit takes seconds on a demo with a library inlined (MBs of script); a file that
    # does not even mention a CDN host of the table names nothing, so it is not audited.
    if not any(h in text for c in cdn.CDNS for h in c.hosts):
        return []
    found: dict[tuple[str, str], Named] = {}
    for ref in audit(text)["references"]:
        url = ref["url"]
        if url.startswith("//"):  # protocol-relative: the page is http(s)
            url = "https:" + url
        hit = cdn.match(url)
        if hit is None:
            continue
        n = found.setdefault((hit.package, hit.spec), Named(hit.package, hit.spec))
        if url not in n.urls:
            n.urls.append(url)
    return list(found.values())


def missing(names: list[Named], store: LibraryCache) -> list[Named]:
    """The names no cached release answers, by the resolver's own rule."""
    pick = CacheResolver(store).pick_version
    return [n for n in names if pick(n.package, n.spec)[0] is None]


def failure_line(n: Named, reason: str) -> str:
    """The one line a blocked request gets when its release could not be fetched."""
    return f"{n.what} is not in the offline cache and could not be fetched: {reason}"


class OnDemand:
    """The fetches of one run (or one `cache prefetch`): what was fetched, what failed and
    why; hands the resolver its failure lines and the releases fetched for this run."""

    def __init__(
        self,
        store: LibraryCache | None = None,
        enabled: bool | None = None,
        log: Optional[Callable[[dict], None]] = None,
        max_fetches: Optional[int] = MAX_FETCHES_PER_RUN,
        budget_s: Optional[float] = FETCH_BUDGET_S,
    ):
        self.store = store or LibraryCache()
        self.enabled = fetch_enabled() if enabled is None else enabled
        self.log = log or (lambda rec: None)  # called with each record once it is known
        self.records: list[dict] = []
        self._tried: dict[tuple[str, str], dict] = {}
        self._unreachable: Optional[str] = None
        self.max_fetches, self.budget_s = max_fetches, budget_s  # None: no limit (`cache prefetch`)
        self._tries, self._spent_s = 0, 0.0

    # ------------------------------------------------------------------ fetching
    def fetch(self, names: list[Named], when: str = "before the run") -> list[dict]:
        """Fetch every name of `names` the cache lacks; returns the new records."""
        if not self.enabled:
            return []
        out = []
        for n in missing(names, self.store):
            if n.key in self._tried:
                continue
            rec = self._fetch_one(n, when)
            self._tried[n.key] = rec
            self.records.append(rec)
            out.append(rec)
        return out

    def _fetch_one(self, n: Named, when: str) -> dict:
        rec: dict[str, Any] = {"package": n.package, "spec": n.spec, "when": when, "urls": n.urls[:5]}
        if self._unreachable:
            rec.update(outcome="unreachable", detail=f"not tried: {self._unreachable}")
        elif self.max_fetches is not None and self._tries >= self.max_fetches:
            rec.update(
                outcome="skipped",
                detail=failure_line(
                    n, f"a run fetches at most {self.max_fetches} releases, and the demo names more that are missing"
                ),
            )
        elif self.budget_s is not None and self._spent_s >= self.budget_s:
            rec.update(
                outcome="skipped",
                detail=failure_line(n, f"a run spends at most {self.budget_s:.0f} s fetching, spent on other releases"),
            )
        if "outcome" in rec:
            self.log(rec)
            return rec
        self._tries += 1
        t = time.monotonic()
        try:
            rel, _ = npm.add(self.store, n.text, timeout=REGISTRY_TIMEOUT_S)
        except npm.RegistryUnreachable as e:
            self._unreachable = str(e)
            rec.update(outcome="unreachable", detail=str(e))
        except npm.IntegrityError as e:
            rec.update(
                outcome="integrity",
                detail=failure_line(
                    n, f"the npm registry's tarball failed its integrity check ({e}); nothing was stored"
                ),
            )
        except npm.NotOnRegistry as e:
            rec.update(outcome="not_on_registry", detail=failure_line(n, str(e)))
        except CacheError as e:
            rec.update(outcome="error", detail=failure_line(n, str(e)))
        else:
            rec.update(
                outcome="fetched",
                version=rel.version,
                integrity=rel.integrity,
                tarball=rel.tarball,
                files=len(rel.files),
                bytes=rel.size,
                detail=f"{rel.spec} was not in the offline cache: fetched from the npm registry "
                f"{when} ({rel.integrity[:23]}…, {len(rel.files)} files, {rel.size / 1e6:.1f} MB)",
            )
        rec["seconds"] = round(time.monotonic() - t, 2)
        self._spent_s += rec["seconds"]
        self.log(rec)
        return rec

    def prefetch_html(self, text: str) -> list[dict]:
        return self.fetch(named_in_html(text))

    def next_demo(self) -> None:
        """Fresh limits for the next demo of a batch or `cache prefetch` (they are per demo,
        so one demo naming dozens of releases cannot use up the others' share)."""
        self._tries, self._spent_s = 0, 0.0

    # ------------------------------------------------------------------ for the resolver
    def failures(self) -> dict[tuple[str, str], str]:
        """(package, spec as written) -> the line its blocked request gets."""
        return {
            (r["package"], r["spec"]): r["detail"]
            for r in self.records
            if r["outcome"] in ("not_on_registry", "integrity", "error", "skipped")
        }

    def fetched(self) -> set[tuple[str, str]]:
        return {(r["package"], r["version"]) for r in self.records if r["outcome"] == "fetched"}

    # ------------------------------------------------------------------ after the run
    def after_run(self, resolver_list: list) -> list[str]:
        """Run-time misses the pre-scan did not see: fetch them for the next run (never
        mid-run); returns the warnings to add to the report."""
        seen: dict[tuple[str, str], Named] = {}
        for r in resolver_list:
            for pkg, spec, url in getattr(r, "missed", []):
                n = seen.setdefault((pkg, spec), Named(pkg, spec))
                if url not in n.urls:
                    n.urls.append(url)
        names = [n for k, n in seen.items() if k not in self._tried]
        warnings = []
        for rec in self.fetch(names, when="after the run"):
            if rec["outcome"] == "fetched":
                warnings.append(
                    f"{rec['package']}@{rec['version']} was asked for at run time (its URL is not "
                    f"written literally in the HTML, e.g. {rec['urls'][0]}), so this run measured "
                    f"without it; it is now cached: run again to measure with it"
                )
            elif rec["outcome"] != "unreachable":
                warnings.append(rec["detail"])
        return warnings

    def report(self) -> dict:
        """For probes.network.data: what was fetched (and what could not be) for this run."""
        return {
            "fetch_enabled": self.enabled,
            "fetched": [r for r in self.records if r["outcome"] == "fetched"],
            "fetch_failed": [r for r in self.records if r["outcome"] != "fetched"],
        }

    def warnings(self) -> list[str]:
        """The report's lines for releases fetched before the run (failures speak through
        the blocked request's own line, unreachable keeps the offline message)."""
        return [r["detail"] for r in self.records if r["outcome"] == "fetched" and r["when"] == "before the run"]


__all__ = ["OnDemand", "Named", "named_in_html", "missing", "fetch_enabled", "failure_line"]


def prefetch_demos(
    files: list,
    when: str,
    *,
    log: Optional[Callable[[dict], None]] = None,
    enabled: bool | None = None,
    max_fetches: Optional[int] = MAX_FETCHES_PER_RUN,
) -> tuple[OnDemand, list[Named]]:
    """`cache prefetch` and a batch's planning: fetch what every demo of `files` names and
    the cache lacks. Returns the fetches and every name found (urls from all demos)."""
    from skycity_bench.inputs.demo_file import load_demo

    names: dict[tuple[str, str], Named] = {}
    od = OnDemand(enabled=enabled, log=log, max_fetches=max_fetches)
    for f in files:
        named = named_in_html(load_demo(f).text)
        for n in named:
            m = names.setdefault(n.key, Named(n.package, n.spec))
            m.urls += [u for u in n.urls if u not in m.urls]
        od.next_demo()
        od.fetch(named, when=when)
    return od, list(names.values())
