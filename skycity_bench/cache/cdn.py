"""The one table of CDN URL patterns the offline cache answers.

Each row says how a CDN spells "file PATH of npm package PKG at version VER" and whether it
serves ES modules whose bare imports it rewrites to its own URLs (esm.sh, Skypack,
jsDelivr's /+esm, unpkg's ?module) or the package's files as they are (unpkg, jsDelivr,
cdnjs, jspm). To support another CDN, add a row to `CDNS`: hosts, a regex over the URL path
with the groups `pkg`, `ver` and `path` (any may be absent), and, for an ES-module CDN, how
it spells a module URL (used to rewrite bare imports so they come back to this table).

cdnjs names libraries its own way and flattens their folders; `CDNJS_LIBS` maps a cdnjs
library to its npm package, how cdnjs writes versions (three.js: r128 = 0.128.0) and the
package folders its files come from.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Optional
from urllib.parse import parse_qs, quote, unquote, urlsplit

# npm package (scoped or not), optional @version, optional /path
_PKG = r"(?P<pkg>@[^/@?]+/[^/@?]+|[^/@?*]+)(?:@(?P<ver>[^/?]*))?(?P<path>/[^?]*)?"


@dataclass(frozen=True)
class Hit:
    """What a CDN URL asks for."""

    cdn: str
    package: str
    spec: str  # version or range as written; "" = none given
    path: str  # file inside the package, no leading slash; "" = the entry
    esm: bool  # the CDN rewrites bare imports (see `module_url`)
    query: dict = field(default_factory=dict)
    module_url: Optional[Callable[[str, str, str], str]] = None  # (pkg, version, path) -> URL
    dirs: tuple[str, ...] = ("",)  # folders to look for `path` in (cdnjs)
    keep_bare: frozenset = frozenset()  # esm.sh ?external= / *pkg: leave these bare
    root: str = ""  # the URL of the package's folder on this CDN (pkg@ver)


@dataclass(frozen=True)
class Cdn:
    name: str
    hosts: tuple[str, ...]
    pattern: re.Pattern
    esm: Callable[[str, dict], bool] = lambda path, q: False
    module_url: Optional[Callable[[str, str, str], str]] = None
    # turn the regex match into (package, spec, path); default: the named groups
    parts: Optional[Callable[[re.Match], tuple[str, str, str]]] = None


def _pv(pkg: str, ver: str, path: str) -> str:
    """'three', '0.160.0', 'build/x.js' -> 'three@0.160.0/build/x.js' (no '@' without a version)."""
    return f"{pkg}{'@' + quote(ver, safe='^~=<>|*.') if ver else ''}{'/' + path if path else ''}"


def _unpkg_url(pkg: str, ver: str, path: str) -> str:
    return f"https://unpkg.com/{_pv(pkg, ver, path)}?module"


def _jsdelivr_url(pkg: str, ver: str, path: str) -> str:
    return f"https://cdn.jsdelivr.net/npm/{_pv(pkg, ver, path)}/+esm"


def _esm_sh_url(pkg: str, ver: str, path: str) -> str:
    return f"https://esm.sh/{_pv(pkg, ver, path)}"


def _skypack_url(pkg: str, ver: str, path: str) -> str:
    return f"https://cdn.skypack.dev/{_pv(pkg, ver, path)}"


def _three_gh(m: re.Match) -> tuple[str, str, str]:
    return "three", f"0.{int(m.group('ver'))}.0", (m.group("path") or "").lstrip("/")


CDNS: list[Cdn] = [
    Cdn(
        "unpkg",
        ("unpkg.com", "www.unpkg.com"),
        re.compile(rf"^/{_PKG}$"),
        esm=lambda path, q: "module" in q,
        module_url=_unpkg_url,
    ),
    Cdn(
        "jsdelivr",
        ("cdn.jsdelivr.net", "fastly.jsdelivr.net", "gcore.jsdelivr.net", "testingcf.jsdelivr.net"),
        re.compile(rf"^/npm/{_PKG}$"),
        esm=lambda path, q: path.endswith("/+esm") or path == "+esm",
        module_url=_jsdelivr_url,
    ),
    # three.js straight from its GitHub repository through jsDelivr: tag rNNN = npm 0.NNN.0
    Cdn(
        "jsdelivr-gh",
        ("cdn.jsdelivr.net", "fastly.jsdelivr.net"),
        re.compile(r"^/gh/mrdoob/three\.js@r?(?P<ver>\d+)(?P<path>/[^?]*)?$"),
        parts=_three_gh,
    ),
    Cdn(
        "esm.sh",
        ("esm.sh", "cdn.esm.sh"),
        re.compile(rf"^/(?:v\d+/|stable/)?(?P<star>\*)?{_PKG}$"),
        esm=lambda path, q: True,
        module_url=_esm_sh_url,
    ),
    Cdn("skypack", ("cdn.skypack.dev",), re.compile(rf"^/{_PKG}$"), esm=lambda path, q: True, module_url=_skypack_url),
    Cdn("jspm", ("ga.jspm.io", "jspm.dev"), re.compile(rf"^/npm:{_PKG}$")),
    Cdn("cdnjs", ("cdnjs.cloudflare.com",), re.compile(r"^/ajax/libs/(?P<lib>[^/]+)/(?P<ver>[^/]+)/(?P<path>[^?]+)$")),
]


@dataclass(frozen=True)
class CdnjsLib:
    package: str
    version: Callable[[str], str] = lambda v: v
    dirs: tuple[str, ...] = ("", "dist/", "build/")


def _three_r(v: str) -> str:
    m = re.fullmatch(r"r(\d+)", v)
    return f"0.{m.group(1)}.0" if m else v


CDNJS_LIBS: dict[str, CdnjsLib] = {
    "three.js": CdnjsLib("three", _three_r, ("build/", "", "examples/js/")),
    "gsap": CdnjsLib("gsap", dirs=("dist/", "")),
    "lil-gui": CdnjsLib("lil-gui", dirs=("dist/", "")),
    "dat-gui": CdnjsLib("dat.gui", dirs=("build/", "")),
    "tween.js": CdnjsLib("@tweenjs/tween.js", dirs=("dist/", "")),
    "cannon.js": CdnjsLib("cannon", dirs=("build/", "")),
}


def match(url: str) -> Optional[Hit]:
    """The package, version and file a CDN URL asks for; None if no row of the table fits."""
    try:
        u = urlsplit(url)
    except ValueError:
        return None
    if u.scheme not in ("http", "https"):
        return None
    host = (u.hostname or "").lower()
    q = {k: v[-1] for k, v in parse_qs(u.query, keep_blank_values=True).items()}
    for cdn in CDNS:
        if host not in cdn.hosts:
            continue
        m = cdn.pattern.match(unquote(u.path))
        if not m:
            continue
        if cdn.name == "cdnjs":
            return _cdnjs(m, q)
        pkg, spec, path = (
            cdn.parts(m) if cdn.parts else (m.group("pkg"), m.group("ver") or "", (m.group("path") or "").lstrip("/"))
        )
        esm = cdn.esm(path, q)
        if path.endswith("+esm"):
            path = path[: -len("+esm")].rstrip("/")
        keep = set()
        if cdn.name == "esm.sh":
            keep = {s.strip() for s in q.get("external", "").split(",") if s.strip()}
            if "star" in m.groupdict() and m.group("star"):
                keep.add("*")  # esm.sh's "*pkg": every dependency stays bare
        g = m.groupdict()
        end = m.end("ver") if g.get("ver") is not None else (m.end("pkg") if g.get("pkg") else m.start("path"))
        return Hit(
            cdn=cdn.name,
            package=pkg,
            spec=spec,
            path=path.rstrip("/"),
            esm=esm,
            query=q,
            module_url=cdn.module_url if esm else None,
            keep_bare=frozenset(keep),
            root=f"{u.scheme}://{u.netloc}{quote(unquote(u.path)[:end], safe='/@:*^~=<>|.')}",
        )
    return None


def _cdnjs(m: re.Match, q: dict) -> Hit:
    lib = m.group("lib")
    info = CDNJS_LIBS.get(lib, CdnjsLib(lib))
    return Hit(
        cdn="cdnjs",
        package=info.package,
        spec=info.version(m.group("ver")),
        path=m.group("path"),
        esm=False,
        query=q,
        dirs=info.dirs,
    )
