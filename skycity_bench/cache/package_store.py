"""The offline library cache on disk: a content-addressed store of npm package files.

Layout under the cache root ($SKYCITY_CACHE, else ~/.cache/skycity-bench; never in git):

    blobs/ab/abcdef…            one file per distinct content, named by its SHA-256
    packages/NAME/VERSION.json  one manifest per cached release (NAME may be @scope/name):
                                registry integrity of the tarball, where it came from, and
                                every file path -> [sha256, size]

Why content-addressed: releases share most files (three.js r158 and r160 differ in a few
hundred of ~1000), so several pinned releases cost little more than one; and a file's name
is its checksum, so the bytes served to a demo are verified on every read and the report
can name them (two runs that list the same sha256 used the same library bytes).

A release exists in the cache only once its manifest is written, and the manifest is written
last and atomically: an interrupted `cache add` leaves stray blobs (collected by `remove`),
never a half release.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from skycity_bench.cache.semver import sort_versions, version_key
from skycity_bench.common.atomic_write import write_atomic

_NAME = re.compile(r"^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$")
_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$")


class CacheError(Exception):
    """A cache operation that cannot be done (bad name, corrupt blob, missing release)."""


def default_root() -> Path:
    env = os.environ.get("SKYCITY_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "skycity-bench"


def valid_name(name: str) -> bool:
    return bool(_NAME.match(name or ""))


def valid_version(version: str) -> bool:
    return bool(_VERSION.match(version or ""))


@dataclass
class Release:
    """One cached package release (its manifest)."""

    name: str
    version: str
    integrity: str  # the registry's dist.integrity (sha512-…)
    files: dict[str, list] = field(default_factory=dict)  # path -> [sha256, size]
    tarball: str = ""
    fetched_at: str = ""

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def size(self) -> int:
        return sum(s for _, s in self.files.values())

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "version": self.version,
            "integrity": self.integrity,
            "tarball": self.tarball,
            "fetched_at": self.fetched_at,
            "files": self.files,
        }

    @classmethod
    def from_json(cls, d: dict) -> Release:
        return cls(
            name=d["name"],
            version=d["version"],
            integrity=d.get("integrity", ""),
            files=d.get("files", {}),
            tarball=d.get("tarball", ""),
            fetched_at=d.get("fetched_at", ""),
        )


class LibraryCache:
    def __init__(self, root: Path | str | None = None):
        self.root = Path(root) if root else default_root()

    # ------------------------------------------------------------------ blobs
    def _blob_path(self, sha: str) -> Path:
        return self.root / "blobs" / sha[:2] / sha

    def put_blob(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        p = self._blob_path(sha)
        if not p.is_file():
            write_atomic(p, data, durable=False)  # hash-checked on every read: no fsync per blob
        return sha

    def read_blob(self, sha: str) -> bytes:
        """The blob's bytes, checked against its name (a corrupt cache never serves)."""
        p = self._blob_path(sha)
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            raise CacheError(f"cache blob {sha[:12]}… is missing (run `skycity-bench cache verify`)") from None
        if hashlib.sha256(data).hexdigest() != sha:
            raise CacheError(f"cache blob {sha[:12]}… is corrupt (run `skycity-bench cache verify`)")
        return data

    # --------------------------------------------------------------- releases
    def _manifest_path(self, name: str, version: str) -> Path:
        if not valid_name(name) or not valid_version(version):
            raise CacheError(f"not a package name and exact version: {name}@{version}")
        return self.root / "packages" / name / f"{version}.json"

    def save_release(self, release: Release) -> None:
        missing = [p for p, (sha, _) in release.files.items() if not self._blob_path(sha).is_file()]
        if missing:
            raise CacheError(f"{release.spec}: {len(missing)} file(s) not in the blob store, e.g. {missing[0]}")
        # the manifest makes the release exist; its blobs are hash-checked, so no fsync
        write_atomic(
            self._manifest_path(release.name, release.version),
            json.dumps(release.to_json(), indent=1, sort_keys=True).encode(),
            durable=False,
        )

    def get(self, name: str, version: str) -> Optional[Release]:
        try:
            p = self._manifest_path(name, version)
        except CacheError:
            return None
        if not p.is_file():
            return None
        return Release.from_json(json.loads(p.read_text(encoding="utf-8")))

    def has(self, name: str, version: str) -> bool:
        try:
            return self._manifest_path(name, version).is_file()
        except CacheError:
            return False

    def versions(self, name: str) -> list[str]:
        """Cached versions of one package, oldest first (semver order)."""
        d = self.root / "packages" / name
        if not valid_name(name) or not d.is_dir():
            return []
        return sort_versions([p.stem for p in d.glob("*.json") if valid_version(p.stem)])

    def releases(self) -> list[Release]:
        base = self.root / "packages"
        if not base.is_dir():
            return []
        out = []
        for p in sorted(base.rglob("*.json")):
            try:
                out.append(Release.from_json(json.loads(p.read_text(encoding="utf-8"))))
            except (ValueError, KeyError):
                continue
        return sorted(out, key=lambda r: (r.name, version_key(r.version)))

    def remove(self, name: str, version: str) -> int:
        """Forget a release and delete the blobs no other release uses; returns blobs freed."""
        p = self._manifest_path(name, version)
        if not p.is_file():
            raise CacheError(f"{name}@{version} is not in the offline cache")
        p.unlink()
        try:
            p.parent.rmdir()  # the package's folder, when it was the last version
        except OSError:
            pass
        return self.collect_garbage()

    def collect_garbage(self) -> int:
        keep = {sha for r in self.releases() for sha, _ in r.files.values()}
        freed = 0
        base = self.root / "blobs"
        if not base.is_dir():
            return 0
        for p in base.glob("*/*"):
            if p.name not in keep:
                p.unlink()
                freed += 1
        return freed

    def verify(self) -> list[str]:
        """Problems found re-hashing every blob every release names (empty: all good)."""
        problems = []
        for r in self.releases():
            for path, (sha, _) in r.files.items():
                try:
                    self.read_blob(sha)
                except CacheError as e:
                    problems.append(f"{r.spec}/{path}: {e}")
        return problems
