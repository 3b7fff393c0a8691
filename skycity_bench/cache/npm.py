"""Fetch releases from the npm registry into the store, verifying the registry's integrity.

The registry ($SKYCITY_NPM_REGISTRY, default https://registry.npmjs.org) says for every
release `dist.integrity`, a Subresource-Integrity string (sha512-<base64>) of its tarball.
The tarball is hashed before anything is unpacked; a mismatch stores nothing. Old releases
that predate `integrity` carry only `dist.shasum` (SHA-1), which is checked instead and the
manifest says so.

Unpacking is defensive (a tarball is data from the internet): only regular files, no
absolute paths, no `..`, no links; the tarball's top folder (npm uses `package/`) is dropped.
"""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import hashlib
import io
import json
import os
import posixpath
import tarfile
import urllib.error
import urllib.parse
import urllib.request

from skycity_bench.cache import semver
from skycity_bench.cache.package_store import CacheError, LibraryCache, Release, valid_name

DEFAULT_REGISTRY = "https://registry.npmjs.org"
_TIMEOUT_S = 60
_MAX_TARBALL = 200 * 1024 * 1024


class IntegrityError(CacheError):
    """The tarball's bytes are not the ones the registry vouches for."""


class NotOnRegistry(CacheError):
    """The registry answered: no such package, or no release matching the version asked for."""


class RegistryUnreachable(CacheError):
    """No answer from the registry (offline, DNS, refused, timed out): nothing is known about
    the package, so callers keep their offline message."""


def registry_url() -> str:
    return os.environ.get("SKYCITY_NPM_REGISTRY", DEFAULT_REGISTRY).rstrip("/")


def split_spec(text: str) -> tuple[str, str]:
    """'three@0.160.0' -> ('three', '0.160.0'); '@scope/pkg@^1' -> ('@scope/pkg', '^1');
    'three' -> ('three', '')."""
    text = text.strip()
    at = text.rfind("@")
    if at > 0:
        name, spec = text[:at], text[at + 1 :]
    else:
        name, spec = text, ""
    if not valid_name(name):
        raise CacheError(f"not an npm package name: {name!r} (expected PKG@VERSION, e.g. three@0.160.0)")
    return name, spec


def check_integrity(data: bytes, integrity: str = "", shasum: str = "") -> str:
    """Check `data` against an SRI string (any of its space-separated hashes, strongest
    first) or, lacking one, a hex SHA-1; returns what was checked. Raises IntegrityError."""
    if integrity:
        parsed = []
        for part in integrity.split():
            algo, _, b64 = part.partition("-")
            if algo in ("sha512", "sha384", "sha256") and b64:
                parsed.append((algo, b64.split("?")[0]))
        if not parsed:
            raise IntegrityError(f"unusable integrity string {integrity!r}")
        order = {"sha512": 0, "sha384": 1, "sha256": 2}
        algo, want = sorted(parsed, key=lambda x: order[x[0]])[0]
        got = base64.b64encode(hashlib.new(algo, data).digest()).decode()
        if got != want:
            raise IntegrityError(f"tarball {algo} is {got[:16]}…, the registry says {want[:16]}…")
        return f"{algo}-{want}"
    if shasum:
        got = hashlib.sha1(data).hexdigest()
        if got != shasum.lower():
            raise IntegrityError(f"tarball sha1 is {got}, the registry says {shasum}")
        return f"sha1-{shasum.lower()} (registry has no sha512 for this release)"
    raise IntegrityError("the registry gives no integrity hash for this release: refusing to cache it")


def unpack(store: LibraryCache, tarball: bytes) -> dict[str, list]:
    """Put every regular file of an npm tarball into the store; returns path -> [sha256, size]."""
    files: dict[str, list] = {}
    try:
        raw = gzip.decompress(tarball)
    except OSError as e:
        raise CacheError(f"the tarball is not gzip data: {e}") from None
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tf:
        for m in tf:
            if not m.isfile():
                continue  # links, devices, folders: never stored
            parts = m.name.replace("\\", "/").split("/")
            if len(parts) < 2 or m.name.startswith("/"):
                continue
            rel = posixpath.normpath("/".join(parts[1:]))
            if rel.startswith("..") or rel.startswith("/") or rel == ".":
                raise CacheError(f"the tarball has an unsafe path: {m.name!r}")
            f = tf.extractfile(m)
            data = f.read() if f else b""
            files[rel] = [store.put_blob(data), len(data)]
    if "package.json" not in files:
        raise CacheError("the tarball has no package.json")
    return files


def install_tarball(
    store: LibraryCache,
    name: str,
    version: str,
    tarball: bytes,
    *,
    integrity: str = "",
    shasum: str = "",
    source: str = "",
) -> Release:
    """Verify and unpack a tarball as release name@version (nothing is stored on a mismatch)."""
    checked = check_integrity(tarball, integrity, shasum)
    files = unpack(store, tarball)
    pkg = json.loads(store.read_blob(files["package.json"][0]))
    if pkg.get("name") != name or pkg.get("version") != version:
        raise CacheError(f"the tarball is {pkg.get('name')}@{pkg.get('version')}, not {name}@{version}")
    rel = Release(
        name=name,
        version=version,
        integrity=checked,
        files=files,
        tarball=source,
        fetched_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    )
    store.save_release(rel)
    return rel


def _get(url: str, timeout: float = _TIMEOUT_S) -> bytes:
    req = urllib.request.Request(url, headers={"Accept": "application/json", "User-Agent": "skycity-bench"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            data = r.read(_MAX_TARBALL + 1)
    except urllib.error.HTTPError as e:
        if e.code >= 500 or e.code == 429:  # the registry is there but not answering
            raise RegistryUnreachable(f"{url}: HTTP {e.code} (the npm registry is not answering)") from None
        raise CacheError(f"{url}: HTTP {e.code}") from None
    except (urllib.error.URLError, OSError) as e:
        raise RegistryUnreachable(f"{url}: {getattr(e, 'reason', e)} (is the npm registry reachable?)") from None
    if len(data) > _MAX_TARBALL:
        raise CacheError(f"{url}: larger than {_MAX_TARBALL >> 20} MiB")
    return data


def packument(name: str, timeout: float = _TIMEOUT_S) -> dict:
    quoted = urllib.parse.quote(name, safe="@")
    try:
        doc = json.loads(_get(f"{registry_url()}/{quoted.replace('/', '%2F')}", timeout))
    except ValueError:
        raise CacheError(f"the registry's answer for {name!r} is not JSON") from None
    except CacheError as e:
        if "HTTP 404" in str(e):
            raise NotOnRegistry(f"no package {name!r} on the npm registry") from None
        raise
    if not isinstance(doc, dict) or "versions" not in doc:
        raise CacheError(f"the registry's answer for {name!r} has no versions")
    return doc


def resolve(doc: dict, name: str, spec: str) -> str:
    """The exact version a spec names on the registry (dist-tag, exact or range)."""
    versions = list(doc.get("versions", {}))
    tags = doc.get("dist-tags", {})
    if spec in tags:
        return tags[spec]
    if not spec:
        found = tags.get("latest") or semver.best(versions, "")
        if found is None:
            raise NotOnRegistry(f"no release of {name} on the npm registry")
        return str(found)
    if spec in doc["versions"]:
        return spec
    v = semver.best(versions, spec)
    if v is None:
        raise NotOnRegistry(f"no release of {name} matches {spec!r} on the npm registry")
    return v


def add(store: LibraryCache, text: str, *, force: bool = False, timeout: float = _TIMEOUT_S) -> tuple[Release, bool]:
    """`cache add PKG@VER`: returns (release, fetched). An exact version already in the
    cache is not fetched again unless `force` (no network needed at all then). `timeout`
    bounds the registry's first answer (the package document); the tarball gets the usual
    limit, since a reachable registry is then known."""
    name, spec = split_spec(text)
    if semver.is_exact(spec) and not force and (have := store.get(name, spec)) is not None:
        return have, False
    doc = packument(name, timeout)
    version = resolve(doc, name, spec)
    if not force and (have := store.get(name, version)) is not None:
        return have, False
    meta = doc["versions"][version]
    dist = meta.get("dist", {})
    url = dist.get("tarball")
    if not url:
        raise CacheError(f"{name}@{version}: the registry gives no tarball")
    data = _get(url)
    return install_tarball(
        store, name, version, data, integrity=dist.get("integrity", ""), shasum=dist.get("shasum", ""), source=url
    ), True
