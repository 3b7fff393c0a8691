"""How far reviewers agree: Krippendorff's alpha for ordinal data, per graded item and
overall, with a bootstrap 95 % interval and the number of candidates behind it.

Reviewers' levels are ordinal (缺失 < 较差 < 一般 < 良好 < 优秀), so the ordinal metric is
the one that fits: two reviewers one level apart disagree less than two levels apart, and
the distance between levels depends on how often the levels in between were used, not on
their percentages. The point estimate comes from the maintained `krippendorff` package; the
bootstrap re-computes alpha from per-candidate coincidence matrices in one vectorised step
(the package would take seconds for 20 items × 2000 resamples, and the sheet is served on
every request). `alpha_from_units` is checked against the package in the tests.

Units are candidates (per item) or (candidate, item) pairs (overall); the values are each
reviewer's standing level share (the sheet's raw scores), so what a reviewer may not see
(a sheet hidden by `hide_reviews`) never enters the figures shown to them. A candidate
scored by fewer than two reviewers is not pairable and counts for nothing.

Pure functions over the sheet's data (no database), like sheet.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Literal, Optional

import numpy as np

# Krippendorff's own guidance (Content Analysis, 2004, §11.4.4): rely on variables with
# alpha >= .800; .667 <= alpha < .800 only for tentative conclusions; below .667 the
# reviewers' mean is not a reliable figure. The sheet uses these two cuts: below the lower
# one an item is flagged, between them its agreement is tentative.
GOOD_FROM = 0.8
RELIABLE_FROM = 0.667
BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_SEED = 20  # fixed: the same scores always give the same interval
# the levels of measurement _distances implements; the sheet's five grade levels are ordinal
Level = Literal["nominal", "ordinal", "interval"]
LEVEL: Level = "ordinal"
FLAG_UNRELIABLE = "reviewers disagree; the mean is not reliable"
NOTE_TENTATIVE = "tentative: between 0.667 and 0.8"
NOTE_GOOD = "good"

Unit = Sequence[float]  # the values the reviewers gave one unit (one per reviewer)


@dataclass
class Alpha:
    """One agreement figure. `alpha` is None when it is undefined (fewer than one pairable
    candidate, or every pairable score on the same level: no disagreement is possible to
    measure); `low`/`high` (the bootstrap 95 % interval) are None with fewer than two
    pairable candidates."""

    item_id: str  # an item id, or "overall"
    alpha: Optional[float]
    low: Optional[float]
    high: Optional[float]
    candidates: int  # candidates with at least two reviewers' scores on it
    units: int  # pairable units (= candidates per item; candidate×item overall)
    scores: int  # pairable scores
    verdict: str  # good | tentative | unreliable | undefined
    note: str

    @property
    def flagged(self) -> bool:
        return self.verdict == "unreliable"


@dataclass
class Agreement:
    level: str
    items: list[Alpha]
    overall: Alpha
    samples: int
    seed: int

    def to_dict(self) -> dict:
        return {
            "measure": f"krippendorff-alpha-{self.level}",
            "bootstrap": {"samples": self.samples, "seed": self.seed, "interval": 0.95, "resampled": "candidates"},
            "thresholds": {"good_from": GOOD_FROM, "reliable_from": RELIABLE_FROM},
            "overall": asdict(self.overall),
            "items": [asdict(a) for a in self.items],
        }


# --- the statistic ----------------------------------------------------------------------


def _domain(units: Iterable[Unit], domain: Optional[Sequence[float]] = None) -> np.ndarray:
    seen = {float(v) for u in units for v in u}
    return np.array(sorted(seen | {float(v) for v in (domain or ())}), dtype=float)


def unit_coincidences(units: Sequence[Unit], domain: np.ndarray) -> np.ndarray:
    """U × V × V: each pairable unit's coincidence matrix (Krippendorff 2011, eq. for o_ck):
    o_uck = n_uc (n_uk − [c = k]) / (m_u − 1); units with one value are left out."""
    counts = np.array([[sum(1 for v in u if float(v) == d) for d in domain] for u in units], dtype=float)
    counts = counts.reshape(-1, len(domain))
    m = counts.sum(axis=1)
    counts = counts[m >= 2]
    m = m[m >= 2]
    o = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(len(domain))[None]
    return o / (m - 1)[:, None, None]


def _distances(n_v: np.ndarray, domain: np.ndarray, level: Level) -> np.ndarray:
    """B × V × V distances for B marginal vectors n_v (B × V)."""
    v = len(domain)
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(v), (n_v.shape[0], v, v))
    if level == "interval":
        return np.broadcast_to((domain[:, None] - domain[None, :]) ** 2, (n_v.shape[0], v, v))
    if level != "ordinal":
        raise ValueError(f"unsupported level of measurement: {level}")
    i = np.arange(v)
    lo, hi = np.minimum(i[:, None], i[None, :]), np.maximum(i[:, None], i[None, :])
    cum = np.cumsum(n_v, axis=1)
    between = cum[:, hi] - cum[:, lo] + n_v[:, lo]  # Σ n_g for g from lo to hi
    return (between - (n_v[:, lo] + n_v[:, hi]) / 2) ** 2


def _alpha_batch(o: np.ndarray, domain: np.ndarray, level: Level) -> np.ndarray:
    """Alpha of each of B total coincidence matrices (B × V × V); NaN where undefined."""
    n_v = o.sum(axis=2)
    n = n_v.sum(axis=1)
    d = _distances(n_v, domain, level)
    observed = (o * d).sum(axis=(1, 2))
    expected = (n_v[:, :, None] * n_v[:, None, :] * d).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 1.0 - (n - 1) * observed / expected
    out[~(expected > 1e-12)] = np.nan
    return out


def alpha_from_units(units: Sequence[Unit], level: Level = LEVEL, domain: Optional[Sequence[float]] = None) -> float:
    """Alpha computed here from coincidences (NaN when undefined); the tests hold it equal to
    the `krippendorff` package's on the published example and on random data."""
    dom = _domain(units, domain)
    o = unit_coincidences(units, dom) if len(dom) else np.zeros((0, 0, 0))
    if len(o) == 0:
        return float("nan")
    return float(_alpha_batch(o.sum(axis=0)[None], dom, level)[0])


def package_alpha(units: Sequence[Unit], level: Level = LEVEL, domain: Optional[Sequence[float]] = None) -> float:
    """The point estimate, from the `krippendorff` package (NaN when undefined)."""
    import krippendorff

    dom = _domain(units, domain)
    if len(dom) < 2:
        return float("nan")  # no scores, or one level only: alpha is 0/0
    counts = np.array([[sum(1 for v in u if float(v) == d) for d in dom] for u in units], dtype=float)
    counts = counts.reshape(-1, len(dom))
    pairable = counts[counts.sum(axis=1) >= 2]
    if len(pairable) == 0 or (pairable.sum(axis=0) > 0).sum() < 2:
        return float("nan")  # nothing pairable, or every pairable score alike: alpha is 0/0
    return float(krippendorff.alpha(value_counts=pairable, value_domain=dom, level_of_measurement=level))


def bootstrap_interval(
    units: Sequence[Unit],
    level: Level = LEVEL,
    domain: Optional[Sequence[float]] = None,
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    groups: Optional[Sequence[object]] = None,
) -> tuple[Optional[float], Optional[float]]:
    """Percentile 95 % interval of alpha over `samples` resamples (with replacement) of the
    pairable units — or of whole groups of units (`groups[i]` names unit i's group: for the
    overall figure a candidate's items are resampled together, since they share reviewers).
    None, None with fewer than two groups or when almost every resample is undefined."""
    dom = _domain(units, domain)
    keep = [i for i, u in enumerate(units) if len(u) >= 2]
    o = unit_coincidences([units[i] for i in keep], dom)
    keys = [groups[i] for i in keep] if groups is not None else list(range(len(keep)))
    names = list(dict.fromkeys(keys))
    if len(names) < 2:
        return None, None
    member = np.zeros((len(names), len(keep)))
    for j, k in enumerate(keys):
        member[names.index(k), j] = 1.0
    # einsum, not @: numpy's BLAS matmul spins up threads that stall on a busy machine,
    # and these products are small
    per_group = np.einsum("gu,uk->gk", member, o.reshape(len(keep), -1))  # G × V²
    rng = np.random.default_rng(seed)
    g = len(names)
    picks = rng.integers(0, g, size=(samples, g))  # each resample: g groups drawn
    draws = np.bincount((picks + g * np.arange(samples)[:, None]).ravel(), minlength=samples * g)
    draws = draws.reshape(samples, g).astype(float)  # B × G: how often each was drawn
    totals = np.einsum("bg,gk->bk", draws, per_group).reshape(samples, len(dom), len(dom))
    a = _alpha_batch(totals, dom, level)
    a = a[~np.isnan(a)]
    if len(a) < samples / 2:
        return None, None
    lo, hi = np.percentile(a, [2.5, 97.5])
    return float(lo), float(hi)


def verdict(a: Optional[float]) -> tuple[str, str]:
    if a is None:
        return "undefined", "undefined: no pairable scores, or all on one level"
    if a >= GOOD_FROM:
        return "good", NOTE_GOOD
    if a >= RELIABLE_FROM:
        return "tentative", NOTE_TENTATIVE
    return "unreliable", FLAG_UNRELIABLE


def measure(
    item_id: str,
    units: Sequence[Unit],
    unit_candidates: Sequence[str],
    *,
    level: Level = LEVEL,
    domain: Optional[Sequence[float]] = None,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Alpha:
    pair = [i for i, u in enumerate(units) if len(u) >= 2]
    point = package_alpha(units, level, domain)
    a = None if np.isnan(point) else round(point, 4)
    lo = hi = None
    if a is not None:
        lo, hi = bootstrap_interval(units, level, domain, samples=samples, seed=seed, groups=unit_candidates)
        lo, hi = (None if lo is None else round(lo, 4)), (None if hi is None else round(hi, 4))
    v, note = verdict(a)
    return Alpha(
        item_id,
        a,
        lo,
        hi,
        len({unit_candidates[i] for i in pair}),
        len(pair),
        sum(len(units[i]) for i in pair),
        v,
        note,
    )


# --- from the sheet -----------------------------------------------------------------------


def agreement(
    sheets: Sequence,
    *,
    level: Level = LEVEL,
    domain: Optional[Sequence[float]] = None,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Agreement:
    """Agreement over the graded items of `sheets` (CandidateSheet), from each line's raw
    scores (one standing score per reviewer). Items in rubric order. The same scores give
    the same answer, kept for the next request (the sheet is rendered on every page view)."""
    per_item: dict[str, tuple[list[list[float]], list[str]]] = {}
    for s in sheets:
        for line in s.items:
            if line.how == "auto":
                continue
            units, cands = per_item.setdefault(line.item_id, ([], []))
            vals = [float(r["share"]) for r in line.raw if r.get("share") is not None]
            if vals:
                units.append(vals)
                cands.append(s.candidate_id)
    key = (
        level,
        tuple(domain or ()),
        samples,
        seed,
        tuple((iid, tuple(map(tuple, u)), tuple(c)) for iid, (u, c) in per_item.items()),
    )
    if key in _CACHE:
        return _CACHE[key]
    items = [
        measure(iid, u, c, level=level, domain=domain, samples=samples, seed=seed) for iid, (u, c) in per_item.items()
    ]
    all_units = [u for us, _ in per_item.values() for u in us]
    all_cands = [c for _, cs in per_item.values() for c in cs]
    overall = measure("overall", all_units, all_cands, level=level, domain=domain, samples=samples, seed=seed)
    out = Agreement(level, items, overall, samples, seed)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = out
    return out


_CACHE: dict[tuple, Agreement] = {}
_CACHE_SIZE = 16
