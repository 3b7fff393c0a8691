"""How a CDN picks a file in a package, and how ES-module CDNs rewrite bare imports.

File CDNs (unpkg, jsDelivr, cdnjs, jspm) serve a package's files as they are: a URL without
a file gets the package's browser entry (`unpkg`/`jsdelivr`/`browser`/`main` fields).
ES-module CDNs (esm.sh, Skypack, jsDelivr /+esm, unpkg ?module) also honour the package's
`exports` map (three/addons/* -> examples/jsm/*) and rewrite bare imports
(`import … from 'three'`) to their own URLs, so a module loads without an import map. The
cache does the same rewrite with the same CDN's URLs, so the import comes back to the
cache: a dependency is pinned to the version the importing module's package asks for, and a
package importing itself (three's addons import 'three') gets its own version, i.e. the
very module the page already loaded. What the cache cannot do is convert CommonJS to ES
modules the way esm.sh does: such a request is a miss that says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Optional

_EXTS = ("", ".js", ".mjs", "/index.js", "/index.mjs")
_CONDITIONS = ("browser", "import", "module", "default")

# At an `import`/`export` keyword: import x from 'a'; export {x} from "a"; import 'a'; import('a')
_IMPORT = re.compile(
    r"""(?P<pre>import\s*\(\s*|(?:import|export)(?![\w$])[^'";]*?(?<![\w$])from\s*|import\s*)(?P<q>['"])(?P<spec>[^'"\s]+)(?P=q)"""
)


def _sub_imports(source: str, repl: Callable[[re.Match], str]) -> str:
    """_IMPORT.sub, but tried only where the keywords are (str.find is ~50x faster than
    letting the regex scan a 1 MB library at every position)."""
    starts = []
    for kw in ("import", "export"):
        i = source.find(kw)
        while i >= 0:
            if i == 0 or not (source[i - 1].isalnum() or source[i - 1] in "_$."):
                starts.append(i)
            i = source.find(kw, i + 6)
    out, last = [], 0
    for i in sorted(starts):
        if i < last:
            continue
        m = _IMPORT.match(source, i)
        if m:
            out.append(source[last : m.start()])
            out.append(repl(m))
            last = m.end()
    out.append(source[last:])
    return "".join(out)


def _pick(target) -> Optional[str]:
    """An exports target: a path string, a condition object or a fallback list."""
    if isinstance(target, str):
        return target
    if isinstance(target, list):
        for t in target:
            got = _pick(t)
            if got:
                return got
        return None
    if isinstance(target, dict):
        for c in _CONDITIONS:
            if c in target:
                got = _pick(target[c])
                if got:
                    return got
    return None


def exports_target(pkg: dict, subpath: str) -> Optional[str]:
    """The file `exports` maps `.` or `./subpath` to (wildcards included), or None."""
    ex = pkg.get("exports")
    if ex is None:
        return None
    key = "./" + subpath if subpath else "."
    if isinstance(ex, (str, list)) or (isinstance(ex, dict) and not any(k.startswith(".") for k in ex)):
        return _pick(ex) if key == "." else None
    if key in ex:
        return _pick(ex[key])
    best = None
    for k, v in ex.items():
        if "*" in k:
            head, _, tail = k.partition("*")
            if key.startswith(head) and key.endswith(tail) and len(key) >= len(head) + len(tail):
                if best is None or len(head) > len(best[0]):
                    best = (head, tail, v, key[len(head) : len(key) - len(tail)])
    if best:
        t = _pick(best[2])
        return t.replace("*", best[3]) if t else None
    return None


def entry(pkg: dict, cdn: str, esm: bool) -> tuple[Optional[str], str]:
    """(file, which field chose it) for a URL that names no file."""
    if esm:
        t = exports_target(pkg, "")
        if t:
            return t, "exports"
        for f in ("module", "browser"):
            if isinstance(pkg.get(f), str):
                return pkg[f], f
        if pkg.get("type") == "module" and isinstance(pkg.get("main"), str):
            return pkg["main"], "main"
        return None, "no ES module entry"
    fields = {"unpkg": ("unpkg", "browser", "main"), "jsdelivr": ("jsdelivr", "browser", "main")}.get(
        cdn, ("browser", "main")
    )
    for f in fields:
        if isinstance(pkg.get(f), str):
            return pkg[f], f
    return "index.js", "default"


def clean(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/")


def find_file(files: dict, path: str) -> Optional[str]:
    """The cached file a request path names, trying what CDNs try (extensions, index.js)."""
    path = clean(path)
    for ext in _EXTS:
        if path + ext in files:
            return path + ext
    return None


def is_bare(spec: str) -> bool:
    return not (spec.startswith((".", "/")) or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", spec))


def bare_package(spec: str) -> tuple[str, str]:
    """'three/addons/x.js' -> ('three', 'addons/x.js'); '@a/b/c' -> ('@a/b', 'c')."""
    parts = spec.split("/")
    n = 2 if spec.startswith("@") else 1
    return "/".join(parts[:n]), "/".join(parts[n:])


def rewrite_bare(source: str, url_for: Callable[[str, str], Optional[str]], keep: frozenset) -> tuple[str, list[str]]:
    """Rewrite bare import specifiers with `url_for(package, subpath)`; returns (source,
    rewritten specifiers). Specifiers in `keep` (or every one when '*' is in it) stay bare."""
    done: list[str] = []

    def sub(m: re.Match) -> str:
        spec = m.group("spec")
        if not is_bare(spec):
            return m.group(0)
        name, sub_path = bare_package(spec)
        if "*" in keep or name in keep or spec in keep:
            return m.group(0)
        url = url_for(name, sub_path)
        if not url:
            return m.group(0)
        done.append(spec)
        return f"{m.group('pre')}{m.group('q')}{url}{m.group('q')}"

    return _sub_imports(source, sub), done


def rewrite_relative(source: str, url_for: Callable[[str], str]) -> tuple[str, list[str]]:
    """Rewrite relative import specifiers ('./three.core.js') with `url_for(spec)`."""
    done: list[str] = []

    def sub(m: re.Match) -> str:
        spec = m.group("spec")
        if not spec.startswith(("./", "../")):
            return m.group(0)
        done.append(spec)
        return f"{m.group('pre')}{m.group('q')}{url_for(spec)}{m.group('q')}"

    return _sub_imports(source, sub), done
