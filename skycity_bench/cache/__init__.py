"""The pinned offline library cache.

Demos that import three.js (or another library) from a CDN are answered from a local,
content-addressed copy of the npm releases (`skycity-bench cache add three@0.160.0`), so
they render with the network closed and are scored on every item as if the library were
inline; packaging.single_file still charges the dependency once, from the network record.

    package_store.py  the content-addressed store on disk ($SKYCITY_CACHE, ~/.cache/skycity-bench)
    npm.py            registry fetch and integrity check
    cdn.py            the one table of CDN URL patterns
    esm.py            entry/exports resolution and bare-import rewriting of ES-module CDNs
    resolver.py       the request resolver the runner gives the closed network
    ondemand.py       fetching the releases a demo names that the cache lacks
"""

from __future__ import annotations

from skycity_bench.cache.package_store import LibraryCache, default_root
from skycity_bench.cache.resolver import CacheResolver


def resolvers(network: str, ondemand=None) -> list:
    """The resolvers of one run (fresh per run: each keeps the run's `served` log).
    `ondemand` (ondemand.OnDemand): what was fetched for this run and what could not be."""
    return [CacheResolver(LibraryCache(), network, ondemand)]


def served_from_cache(resolver_list: list) -> list[dict]:
    """What the run's cache resolvers served: one entry per URL (report.probes.network)."""
    return [e for r in resolver_list for e in getattr(r, "served", [])]


__all__ = ["resolvers", "served_from_cache", "CacheResolver", "LibraryCache", "default_root"]
