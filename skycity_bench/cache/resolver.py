"""The request resolver the runner hands to the closed network (browser/network.py).

For each request it answers, in order:
  - None: the URL is not a CDN URL of the table in cdn.py (the network blocks it as usual);
  - Resolved(bytes, content type, note): the file is in the cache; the network fulfils the
    request with it (CORS header included) and records it as "served" with the note, so
    packaging.single_file still sees the external dependency;
  - a str: a CDN URL the cache cannot answer, saying exactly what is missing and the
    command that adds it. The network records it in the request's detail and in `misses`,
    then blocks the request (offline) or lets it through (--network allow).

Every served file is also logged in `served` (package, version, path, sha256 of the bytes
the page got, the release's registry integrity), which the runner puts in the report, so
two runs are known to have used the same library bytes.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import posixpath
from typing import Optional

from skycity_bench.browser.network import Resolved
from skycity_bench.cache import cdn, esm, semver
from skycity_bench.cache.package_store import CacheError, LibraryCache, Release

_TYPES = {
    ".js": "application/javascript",
    ".mjs": "application/javascript",
    ".cjs": "application/javascript",
    ".json": "application/json",
    ".map": "application/json",
    ".wasm": "application/wasm",
    ".css": "text/css",
    ".html": "text/html",
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".ktx2": "image/ktx2",
    ".glb": "model/gltf-binary",
    ".gltf": "model/gltf+json",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".hdr": "application/octet-stream",
    ".bin": "application/octet-stream",
}
_JS = (".js", ".mjs", ".cjs")


def content_type(path: str) -> str:
    ext = posixpath.splitext(path)[1].lower()
    return _TYPES.get(ext) or mimetypes.guess_type(path)[0] or "application/octet-stream"


def add_command(name: str, spec: str) -> str:
    arg = f"{name}@{spec}" if spec else f"{name}@latest"
    if any(c in arg for c in " ^~<>|*"):
        arg = f"'{arg}'"
    return f"skycity-bench cache add {arg}"


class CacheResolver:
    def __init__(self, store: LibraryCache | None = None, network: str = "offline", ondemand=None):
        self.store = store or LibraryCache()
        self.network = network
        self.served: list[dict] = []
        # releases fetched for this run (marked in `served`), and for names the
        # registry could not provide, the one line their blocked request gets (ondemand.py)
        self.fetched: set[tuple[str, str]] = ondemand.fetched() if ondemand else set()
        self.failures: dict[tuple[str, str], str] = ondemand.failures() if ondemand else {}
        self.missed: list[tuple[str, str, str]] = []  # (package, spec, url) no cached release answered
        self._by_url: dict[str, dict] = {}
        self._releases: dict[tuple[str, str], Optional[Release]] = {}
        self._pkg_json: dict[tuple[str, str], dict] = {}
        self._answers: dict[str, Resolved] = {}  # every probe's page asks again: answer once

    # ------------------------------------------------------------------ lookups
    def _release(self, name: str, version: str) -> Optional[Release]:
        key = (name, version)
        if key not in self._releases:
            self._releases[key] = self.store.get(name, version)
        return self._releases[key]

    def _package_json(self, rel: Release) -> dict:
        key = (rel.name, rel.version)
        if key not in self._pkg_json:
            try:
                self._pkg_json[key] = json.loads(self.store.read_blob(rel.files["package.json"][0]))
            except (KeyError, ValueError, CacheError):
                self._pkg_json[key] = {}
        return self._pkg_json[key]

    def _miss(self, text: str) -> str:
        if self.network == "allow":
            return text + " (--network allow: the request went to the CDN itself)"
        return text

    def pick_version(self, name: str, spec: str) -> tuple[Optional[str], str]:
        """(cached version, or None with the miss message)."""
        if semver.is_exact(spec):
            if self.store.has(name, spec):
                return spec, ""
            return None, f"{name}@{spec} is not in the offline cache: run `{add_command(name, spec)}`"
        cached = self.store.versions(name)
        v = semver.best(cached, spec)
        if v:
            return v, ""
        what = f"{name}@{spec}" if spec else f"{name} (no version in the URL)"
        have = f" (cached: {', '.join(cached)})" if cached else ""
        return None, f"{what}: no release in the offline cache matches{have}: run `{add_command(name, spec)}`"

    # ------------------------------------------------------------------ answer
    def __call__(self, url: str):
        if url in self._answers:
            self._by_url[url]["requests"] += 1
            return self._answers[url]
        hit = cdn.match(url)
        if hit is None:
            return None
        version, why = self.pick_version(hit.package, hit.spec)
        if version is None:
            self.missed.append((hit.package, hit.spec, url))
            return self._miss(self.failures.get((hit.package, hit.spec), why))
        rel = self._release(hit.package, version)
        if rel is None:
            return self._miss(f"{hit.package}@{version}: the cache manifest could not be read")
        pkg = self._package_json(rel)
        path, how = self._file(hit, rel, pkg)
        if path is None:
            return self._miss(f"{rel.spec} has no file {hit.path or '(entry)'}: {how}")
        sha = rel.files[path][0]
        try:
            body = self.store.read_blob(sha)
        except CacheError as e:
            return self._miss(f"{rel.spec}/{path}: {e}")
        rewritten: list[str] = []
        if path.endswith(_JS) and (hit.esm or how == "entry"):
            body, rewritten = self._rewrite(body, hit, rel, pkg, path, how)
        note = f"served from the offline cache: {rel.spec}/{path} ({rel.integrity[:23]}…)"
        if hit.spec != version:
            note += f"; the URL asked for {hit.package}@{hit.spec or '(no version)'}"
        self._log(url, hit, rel, path, body, rewritten)
        self._answers[url] = Resolved(body=body, content_type=content_type(path), note=note)
        return self._answers[url]

    def _file(self, hit: cdn.Hit, rel: Release, pkg: dict) -> tuple[Optional[str], str]:
        """(file in the release, how it was chosen: 'entry' | 'exports' | 'path')."""
        if not hit.path:
            target, field = esm.entry(pkg, hit.cdn, hit.esm)
            if target is None:
                return None, (
                    "the package has no ES module entry; esm.sh would convert its CommonJS "
                    "entry, which the offline cache does not do"
                )
            found = esm.find_file(rel.files, target)
            return (
                (found, "entry") if found else (None, f"its {field} field names {target}, which is not in the package")
            )
        if hit.esm:
            target = esm.exports_target(pkg, hit.path)
            if target:
                found = esm.find_file(rel.files, target)
                if found:
                    return found, "exports"
        for d in hit.dirs:
            found = esm.find_file(rel.files, d + hit.path)
            if found:
                return found, "path"
        return None, "not a file of the npm package"

    def _rewrite(self, body: bytes, hit: cdn.Hit, rel: Release, pkg: dict, path: str, how: str):
        """ES-module CDNs: bare imports -> this CDN's URLs (back into the cache). A file
        served for a URL naming no file: relative imports -> absolute URLs of the file's
        real folder (the CDN would have redirected to the file)."""
        deps: dict[str, str] = {}
        for f in ("peerDependencies", "optionalDependencies", "dependencies"):
            deps.update(pkg.get(f) or {})
        for d in (hit.query.get("deps") or "").split(","):  # esm.sh ?deps=three@0.160.0
            if "@" in d.strip()[1:]:
                n, _, v = d.strip().rpartition("@")
                deps[n] = v

        def url_for(name: str, sub: str) -> Optional[str]:
            if hit.module_url is None:
                return None
            v = rel.version if name == rel.name else deps.get(name, "")
            return hit.module_url(name, v, sub)

        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return body, []
        done: list[str] = []
        if hit.esm:
            text, done = esm.rewrite_bare(text, url_for, hit.keep_bare)
        if how == "entry":
            folder = posixpath.dirname(path)

            def file_url(spec: str) -> str:
                p = posixpath.normpath(posixpath.join(folder, spec))
                return hit.module_url(rel.name, rel.version, p) if hit.module_url else f"{hit.root}/{p}"

            text, more = esm.rewrite_relative(text, file_url)
            done += more
        return text.encode("utf-8"), done

    def _log(self, url: str, hit: cdn.Hit, rel: Release, path: str, body: bytes, rewritten: list[str]) -> None:
        entry = {
            "url": url,
            "cdn": hit.cdn,
            "package": rel.name,
            "version": rel.version,
            "path": path,
            "sha256": hashlib.sha256(body).hexdigest(),
            "file_sha256": rel.files[path][0],
            "bytes": len(body),
            "integrity": rel.integrity,
            "requests": 1,
        }
        if rewritten:
            entry["rewritten_imports"] = sorted(set(rewritten))
        if rel.fetched_at:
            entry["cached_at"] = rel.fetched_at  # when the release entered the cache
        if (rel.name, rel.version) in self.fetched:
            entry["fetched_for_this_run"] = True
        self._by_url[url] = entry
        self.served.append(entry)
