"""Just enough npm semver to pick a cached release for what a CDN URL names.

Demos pin exact versions (three@0.160.0) most of the time; CDNs also accept partial
versions (three@0.160), ranges (^0.160.0, ~0.160.0), tags (latest) and no version at all.
An exact version must be in the cache as is. Anything else is resolved to the highest
cached release that satisfies it, and the report names the release that was served, so the
run is still reproducible from its report. Prereleases match only an exact pin.
"""

from __future__ import annotations

import re

_FULL = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")
_PARTIAL = re.compile(r"^v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?$")


def parse(v: str) -> tuple[int, int, int, str] | None:
    m = _FULL.match(v or "")
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or ""


def version_key(v: str):
    p = parse(v)
    if p is None:
        return (-1, -1, -1, 0, v)
    # a release sorts after its prereleases
    return (p[0], p[1], p[2], 0 if p[3] else 1, p[3])


def sort_versions(vs: list[str]) -> list[str]:
    return sorted(vs, key=version_key)


def is_exact(spec: str) -> bool:
    return parse(spec) is not None


def _partial_bounds(text: str):
    """'0.160' -> ((0,160,0), (0,161,0)); '' / 'x' / '*' -> everything."""
    m = _PARTIAL.match(text)
    if not m:
        return None
    parts = [None if (g is None or g in "xX*") else int(g) for g in m.groups()]
    return parts


def satisfies(version: str, spec: str) -> bool:
    """Whether `version` satisfies `spec` (exact, partial, x-range, ^, ~, >=, <, ||, tags)."""
    p = parse(version)
    if p is None:
        return False
    spec = (spec or "").strip()
    if spec in ("", "*", "x", "latest"):
        return not p[3]
    if "||" in spec:
        return any(satisfies(version, s) for s in spec.split("||"))
    if " " in spec and not spec.startswith(("^", "~")):
        return all(satisfies(version, s) for s in spec.split())
    if is_exact(spec.lstrip("=")):
        return parse(spec.lstrip("=")) == p
    if p[3]:
        return False  # prereleases only by exact pin
    for op in (">=", "<=", ">", "<"):
        if spec.startswith(op):
            q = parse(spec[len(op) :].strip())
            if q is None:
                return False
            a, b = p[:3], q[:3]
            return {">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b}[op]
    if spec[0] in "^~":
        return _caret_tilde(p, spec[0], spec[1:].strip())
    parts = _partial_bounds(spec)
    if parts is None:
        return False
    return all(want is None or have == want for have, want in zip(p[:3], parts))


def _caret_tilde(p: tuple[int, int, int, str], kind: str, rest: str) -> bool:
    """`^rest` or `~rest`: at least `rest`, below the next version its kind allows."""
    parts = _partial_bounds(rest)
    if parts is None:
        return False
    lo = tuple(x or 0 for x in parts)
    if tuple(p[:3]) < lo:
        return False
    major, minor, patch = parts
    if kind == "~":
        if minor is None:
            return p[0] == major
        return p[0] == major and p[1] == minor
    # caret: the left-most non-zero part stays fixed
    if major != 0 or minor is None:
        return p[0] == major
    if minor != 0 or patch is None:
        return p[0] == 0 and p[1] == minor
    return tuple(p[:3]) == (0, 0, patch)


def best(versions: list[str], spec: str) -> str | None:
    """The highest of `versions` that satisfies `spec`, or None."""
    ok = [v for v in versions if satisfies(v, spec)]
    return sort_versions(ok)[-1] if ok else None
