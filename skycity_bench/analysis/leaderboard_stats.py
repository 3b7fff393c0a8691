"""Leaderboard statistics: which system builds better Sky City demos, with honest error bars.

The unit of evidence is nested: a system answers prompts; each answer (a *sample*, one
candidate demo) may be measured more than once (*runs*: reviews or re-judgings of the same
demo). A system's mean weighs prompts equally: the mean over its prompts of the mean over
samples of the mean over runs. Its interval comes from a hierarchical bootstrap that
resamples prompts, then samples within each drawn prompt (runs stay averaged inside their
sample: they measure one demo, they are not new demos).

One prompt draw per resample is shared by every system, so pairwise differences are paired
by prompt (a hard prompt drags both systems down together and cancels in the difference) and
rank ranges compare systems on the same draw. The draw is taken over the union of prompts; a
system lacking a drawn prompt skips it, and a pair uses only the prompts both answered.

Small prompt counts make a plain percentile interval too narrow (the bootstrap spread of a
mean of n prompts is (n-1)/n of the true variance and its tails are normal, not Student-t).
The intervals therefore use Hesterberg's expanded percentile interval: the percentile
interval read at the tail level alpha' where z(alpha'/2) = sqrt(n/(n-1)) * t(alpha/2, n-1).
Resampling samples inside resampled prompts counts the sample spread twice (it is already in
each prompt's mean), so where sample spread dominates the intervals err wide, never narrow:
the simulation in tests/unit/test_leaderboard_stats.py measures coverage of true means and
differences between about 93 and 99 %.

Pure numpy, no I/O: the CLI feeds rows parsed from a CSV, the review store can feed the same
`ScoreRow`s from a query. Missing totals (a candidate still waiting for reviews) are counted
as missing, never as zero.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Optional

import numpy as np

from skycity_bench.common.errors import UserError

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 20240
MIN_RESAMPLES = 100
LEVEL = 0.95
REQUIRED_COLUMNS = ("system", "prompt", "sample", "run", "total")
GROUP_PREFIX = "group:"
TOTAL = "total"


@dataclass(frozen=True)
class ScoreRow:
    """One measurement of one candidate: `total` is the 100-point total, None while the
    candidate still misses reviews; `groups` holds per sheet-group subtotals (None = missing)."""

    system: str
    prompt: str
    sample: str
    run: str
    total: Optional[float]
    groups: Mapping[str, Optional[float]] = field(default_factory=dict)

    def value(self, metric: str) -> Optional[float]:
        return self.total if metric == TOTAL else self.groups.get(metric)


@dataclass(frozen=True)
class Estimate:
    """A mean with its 95 % interval; `ci` is None (with `note` saying why) when the data
    cannot support one."""

    mean: Optional[float]
    ci: Optional[tuple[float, float]]
    note: Optional[str] = None


@dataclass(frozen=True)
class VarianceParts:
    """Nested variance components of one system's totals, in points².

    `measurement`: between runs of the same sample; `sample`: between samples of the same
    prompt (measurement removed); `prompt`: between the system's prompt means (the lower
    levels removed). `contribution` is each level's share of the variance of the system mean
    at the present design (prompts P, samples per prompt m, runs per sample r): prompt/P,
    sample/(P m), measurement/(P m r). More runs shrink only the last; more samples the last
    two; more prompts all three."""

    measurement: Optional[float]
    sample: Optional[float]
    prompt: Optional[float]
    contribution: dict[str, float]
    samples_per_prompt: float
    runs_per_sample: float
    note: str


@dataclass(frozen=True)
class SystemResult:
    system: str
    total: Estimate
    rank: Optional[int]
    rank_range: Optional[tuple[int, int]]
    prompts: int
    samples: int  # candidates with at least one total
    runs: int  # measurements with a total
    missing: int  # empty total cells (measurements still missing reviews)
    missing_candidates: int  # candidates without any total yet
    groups: dict[str, Estimate]
    variance: Optional[VarianceParts]
    candidates: list[float]  # each candidate's mean total over its runs (the figure's dots)


@dataclass(frozen=True)
class PairResult:
    a: str
    b: str
    diff: Optional[float]  # mean(a) - mean(b) over the prompts both answered
    ci: Optional[tuple[float, float]]
    prompts: int  # prompts both answered
    note: Optional[str] = None

    @property
    def separated(self) -> bool:
        """The interval excludes 0: the bootstrap tells the two apart at the 95 % level."""
        return self.ci is not None and (self.ci[0] > 0 or self.ci[1] < 0)


@dataclass(frozen=True)
class Leaderboard:
    seed: int
    resamples: int
    systems: list[SystemResult]  # best mean first
    pairs: list[PairResult]
    groups: list[str]

    def to_dict(self) -> dict[str, Any]:
        return board_dict(self)


# ---------------------------------------------------------------- rows from records


def rows_from_records(records: Iterable[Mapping[str, Optional[str]]], first_line: int = 2) -> list[ScoreRow]:
    """ScoreRows from string records (a CSV's DictReader, a store export): the required
    columns, a total that is a number or empty (missing), and every `group:NAME` column as a
    group subtotal. Raises UserError naming the line for anything else."""
    rows: list[ScoreRow] = []
    for line, rec in enumerate(records, first_line):
        missing = [c for c in REQUIRED_COLUMNS if c not in rec]
        if missing:
            raise UserError(f"missing column(s): {', '.join(missing)} (need {', '.join(REQUIRED_COLUMNS)})")
        ids = {c: (rec.get(c) or "").strip() for c in REQUIRED_COLUMNS[:4]}
        empty = [c for c, v in ids.items() if not v]
        if empty:
            raise UserError(f"line {line}: empty {', '.join(empty)}")
        groups = {
            k[len(GROUP_PREFIX) :].strip(): _number(rec.get(k), line, k)
            for k in rec
            if k and k.startswith(GROUP_PREFIX)
        }
        rows.append(ScoreRow(**ids, total=_number(rec.get(TOTAL), line, TOTAL), groups=groups))
    return rows


def _number(text: Optional[str], line: int, column: str) -> Optional[float]:
    t = (text or "").strip()
    if not t:
        return None
    try:
        v = float(t)
    except ValueError:
        raise UserError(f"line {line}: {column} is not a number: {t!r}") from None
    if not math.isfinite(v):
        raise UserError(f"line {line}: {column} is not a finite number: {t!r}")
    return v


# ---------------------------------------------------------------- nesting


Nest = dict[str, dict[str, dict[str, list[float]]]]  # system -> prompt -> sample -> run values


def nest(rows: Sequence[ScoreRow], metric: str = TOTAL) -> Nest:
    """Present values of one metric, nested system → prompt → sample → runs (missing dropped)."""
    out: Nest = {}
    for r in rows:
        v = r.value(metric)
        if v is not None:
            out.setdefault(r.system, {}).setdefault(r.prompt, {}).setdefault(r.sample, []).append(float(v))
    return out


@dataclass(frozen=True)
class _Table:
    """Sample means padded into arrays: y[s, p, k] (NaN padding), n[s, p] samples present."""

    y: np.ndarray
    n: np.ndarray

    def prompt_means(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.nansum(self.y, axis=2) / self.n  # NaN where a system lacks the prompt


def _table(data: Nest, systems: Sequence[str], prompts: Sequence[str]) -> _Table:
    width = max([len(s) for p in data.values() for s in p.values()] + [1])
    y = np.full((len(systems), len(prompts), width), np.nan)
    n = np.zeros((len(systems), len(prompts)), dtype=int)
    for i, system in enumerate(systems):
        for j, prompt in enumerate(prompts):
            means = [float(np.mean(v)) for v in data.get(system, {}).get(prompt, {}).values()]
            y[i, j, : len(means)] = means
            n[i, j] = len(means)
    return _Table(y, n)


# ---------------------------------------------------------------- the bootstrap


@dataclass(frozen=True)
class _Draws:
    """One resampling plan shared by every metric: the prompt draw (B, P) and one seed per
    system for the sample draws (regenerated per metric, so a group's resamples reuse the
    total's sample picks wherever the same samples are present)."""

    prompts: np.ndarray
    system_seeds: list[np.random.SeedSequence]
    width: int


def _plan(seed: int, resamples: int, n_prompts: int, n_systems: int, width: int) -> _Draws:
    root = np.random.SeedSequence(seed)
    prompt_seed, *system_seeds = root.spawn(n_systems + 1)
    draw = np.random.default_rng(prompt_seed).integers(0, n_prompts, size=(resamples, n_prompts))
    return _Draws(draw, system_seeds, width)


def resampled_prompt_means(table: _Table, draws: _Draws) -> tuple[np.ndarray, np.ndarray]:
    """Hierarchical resample: for each resample and drawn prompt slot, the mean of the system's
    samples at that prompt drawn with replacement. Returns (means, present), both (S, B, P);
    `present` is False where the system lacks the drawn prompt."""
    b, p = draws.prompts.shape
    s_count, _, width = table.y.shape
    means = np.zeros((s_count, b, p))
    present = np.zeros((s_count, b, p), dtype=bool)
    slots = np.arange(width)
    for s in range(s_count):
        n = table.n[s][draws.prompts]  # (B, P) samples available at each drawn prompt
        u = np.random.default_rng(draws.system_seeds[s]).random((b, p, max(width, draws.width)))[..., :width]
        k = np.minimum((u * n[..., None]).astype(int), width - 1)
        vals = table.y[s][draws.prompts[..., None], k]
        used = slots < n[..., None]
        means[s] = np.where(used, vals, 0.0).sum(axis=2) / np.maximum(n, 1)
        present[s] = n > 0
    return means, present


def _weighted(means: np.ndarray, weight: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return (means * weight).sum(axis=-1) / weight.sum(axis=-1)


def expanded_tail(n: int, level: float = LEVEL) -> float:
    """The two-sided tail mass for Hesterberg's expanded percentile interval over n units:
    the normal tail beyond sqrt(n/(n-1)) * t(level, n-1)."""
    z = math.sqrt(n / (n - 1)) * student_t_quantile(level, n - 1)
    return 2 * (1 - NormalDist().cdf(z))


def student_t_quantile(level: float, df: int) -> float:
    """The t with P(|T| <= t) = level for Student's t with integer df (bisection on the
    closed-form CDF, Abramowitz & Stegun 26.7.3-4; no scipy needed)."""
    lo, hi = 0.0, 1.0
    while _t_central(hi, df) < level:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _t_central(mid, df) < level else (lo, mid)
    return (lo + hi) / 2


def _t_central(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with df degrees of freedom."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2 == 0:  # sin θ (1 + 1/2 cos² θ + 1·3/(2·4) cos⁴ θ + ...)
        term, total = 1.0, 1.0
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        return math.sin(theta) * total
    if df == 1:
        return 2 * theta / math.pi
    term, total = math.cos(theta), math.cos(theta)  # 2/π (θ + sin θ (cos θ + 2/3 cos³ θ + ...))
    for k in range(1, (df - 1) // 2):
        term *= c2 * (2 * k) / (2 * k + 1)
        total += term
    return 2 / math.pi * (theta + math.sin(theta) * total)


def interval(values: np.ndarray, n_units: int, level: float = LEVEL) -> Optional[tuple[float, float]]:
    """Expanded percentile interval of bootstrap values over n_units top-level units."""
    v = values[np.isfinite(values)]
    if n_units < 2 or v.size == 0:
        return None
    tail = expanded_tail(n_units, level)
    lo, hi = np.percentile(v, [100 * tail / 2, 100 * (1 - tail / 2)])
    return float(lo), float(hi)


# ---------------------------------------------------------------- the board


def leaderboard(rows: Sequence[ScoreRow], resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> Leaderboard:
    """Means, 95 % intervals, rank ranges, paired differences and variance components for
    every system in `rows` (see the module docstring for the method). Deterministic for a
    given seed. Raises UserError when nothing can be estimated."""
    if resamples < MIN_RESAMPLES:
        raise UserError(f"--resamples: at least {MIN_RESAMPLES}, got {resamples}")
    if not rows:
        raise UserError("no score rows")
    systems = sorted({r.system for r in rows})
    prompts = sorted({r.prompt for r in rows})
    if len(prompts) < 2:
        raise UserError(f"a single prompt ({prompts[0]}): intervals need at least 2 prompts")
    groups = sorted({g for r in rows for g in r.groups})
    totals = nest(rows)
    table = _table(totals, systems, prompts)
    draws = _plan(seed, resamples, len(prompts), len(systems), table.y.shape[2])
    boot, present = resampled_prompt_means(table, draws)
    estimates = [_estimate(table, boot, present, i) for i in range(len(systems))]
    group_estimates = {g: _metric_estimates(rows, g, systems, prompts, draws) for g in groups}
    ranks, ranges = _ranks(estimates, table, boot, present)
    results = [
        _system_result(
            rows, totals, name, estimates[i], ranks[i], ranges[i], {g: group_estimates[g][i] for g in groups}
        )
        for i, name in enumerate(systems)
    ]
    order = sorted(range(len(systems)), key=lambda i: (ranks[i] is None, ranks[i] or 0, systems[i]))
    pairs = [_pair(systems, table, boot, present, a, b) for x, a in enumerate(order) for b in order[x + 1 :]]
    return Leaderboard(seed, resamples, [results[i] for i in order], pairs, groups)


def _estimate(table: _Table, boot: np.ndarray, present: np.ndarray, s: int) -> Estimate:
    """One system's mean over its prompts and its interval (None under 2 prompts)."""
    n_prompts = int((table.n[s] > 0).sum())
    if n_prompts == 0:
        return Estimate(None, None, "no totals yet")
    mean = float(np.nanmean(table.prompt_means()[s]))
    if n_prompts < 2:
        return Estimate(mean, None, "fewer than 2 prompts: no interval")
    return Estimate(mean, interval(_weighted(boot[s], present[s]), n_prompts))


def _metric_estimates(
    rows: Sequence[ScoreRow], metric: str, systems: Sequence[str], prompts: Sequence[str], draws: _Draws
) -> list[Estimate]:
    """A sheet group's estimates per system, on the same prompt draw as the totals."""
    table = _table(nest(rows, metric), systems, prompts)
    boot, present = resampled_prompt_means(table, draws)
    return [_estimate(table, boot, present, i) for i in range(len(systems))]


def _ranks(
    estimates: Sequence[Estimate], table: _Table, boot: np.ndarray, present: np.ndarray
) -> tuple[list[Optional[int]], list[Optional[tuple[int, int]]]]:
    """Rank by mean (1 = best) and the 2.5-97.5 % range of ranks across resamples, among the
    systems that have an interval (a system under 2 prompts is listed, not ranked)."""
    ranked = [i for i, e in enumerate(estimates) if e.ci is not None]
    ranks: list[Optional[int]] = [None] * len(estimates)
    ranges: list[Optional[tuple[int, int]]] = [None] * len(estimates)
    if not ranked:
        return ranks, ranges
    point = np.array([estimates[i].mean for i in ranked], dtype=float)
    for i, r in zip(ranked, _rank_rows(point[None, :])[0], strict=True):
        ranks[i] = int(r)
    means = np.stack([_weighted(boot[i], present[i]) for i in ranked], axis=1)  # (B, ranked)
    means = means[np.isfinite(means).all(axis=1)]
    if means.size == 0:
        return ranks, ranges
    rank_draws = _rank_rows(means)
    lo = np.percentile(rank_draws, 100 * (1 - LEVEL) / 2, axis=0, method="lower")
    hi = np.percentile(rank_draws, 100 * (1 + LEVEL) / 2, axis=0, method="higher")
    for col, i in enumerate(ranked):
        ranges[i] = (int(lo[col]), int(hi[col]))
    return ranks, ranges


def _rank_rows(means: np.ndarray) -> np.ndarray:
    """Competition ranks per row: 1 + the number of systems with a strictly higher mean."""
    return 1 + (means[:, None, :] > means[:, :, None]).sum(axis=2)


def _pair(systems: Sequence[str], table: _Table, boot: np.ndarray, present: np.ndarray, a: int, b: int) -> PairResult:
    """mean(a) - mean(b) over the prompts both answered, paired by prompt in every resample."""
    shared = (table.n[a] > 0) & (table.n[b] > 0)
    n_shared = int(shared.sum())
    if n_shared == 0:
        return PairResult(systems[a], systems[b], None, None, 0, "no prompt answered by both")
    pm = table.prompt_means()
    diff = float(np.mean(pm[a][shared] - pm[b][shared]))
    if n_shared < 2:
        return PairResult(systems[a], systems[b], diff, None, 1, "fewer than 2 shared prompts: no interval")
    both = present[a] & present[b]
    ci = interval(_weighted(boot[a] - boot[b], both), n_shared)
    return PairResult(systems[a], systems[b], diff, ci, n_shared)


def _system_result(
    rows: Sequence[ScoreRow],
    totals: Nest,
    name: str,
    total: Estimate,
    rank: Optional[int],
    rank_range: Optional[tuple[int, int]],
    groups: dict[str, Estimate],
) -> SystemResult:
    mine = totals.get(name, {})
    candidates = {(r.prompt, r.sample) for r in rows if r.system == name}
    with_total = {(p, s) for p, samples in mine.items() for s in samples}
    return SystemResult(
        system=name,
        total=total,
        rank=rank,
        rank_range=rank_range,
        prompts=len(mine),
        samples=len(with_total),
        runs=sum(len(v) for samples in mine.values() for v in samples.values()),
        missing=sum(1 for r in rows if r.system == name and r.total is None),
        missing_candidates=len(candidates - with_total),
        groups=groups,
        variance=variance_parts(mine),
        candidates=[float(np.mean(v)) for samples in mine.values() for v in samples.values()],
    )


# ---------------------------------------------------------------- variance components


def variance_parts(data: Mapping[str, Mapping[str, Sequence[float]]]) -> Optional[VarianceParts]:
    """Nested one-way variance components of one system (prompt → sample → run values), by
    the method of moments: the pooled within-sample run variance is the measurement part;
    the pooled between-sample variance of sample means within a prompt, less what the
    measurement noise puts there, is the sample part; the variance of prompt means, less what
    both lower levels put there, is the prompt part (each clipped at 0). None without any
    sample measured twice: the measurement part cannot be told apart then."""
    runs = [np.asarray(v, float) for samples in data.values() for v in samples.values()]
    df_runs = sum(len(v) - 1 for v in runs)
    if df_runs == 0:
        return None
    measurement = sum(float(((v - v.mean()) ** 2).sum()) for v in runs) / df_runs
    inv_runs = float(np.mean([1 / len(v) for v in runs]))
    sample_means = {p: np.array([np.mean(v) for v in samples.values()]) for p, samples in data.items()}
    df_samples = sum(len(m) - 1 for m in sample_means.values())
    sample: Optional[float] = None
    if df_samples > 0:
        between = sum(float(((m - m.mean()) ** 2).sum()) for m in sample_means.values()) / df_samples
        sample = max(0.0, between - measurement * inv_runs)
    inv_samples = float(np.mean([1 / len(m) for m in sample_means.values()]))
    prompt: Optional[float] = None
    if len(sample_means) >= 2 and sample is not None:
        spread = float(np.var([m.mean() for m in sample_means.values()], ddof=1))
        prompt = max(0.0, spread - (sample + measurement * inv_runs) * inv_samples)
    return _parts(measurement, sample, prompt, len(data), 1 / inv_samples, 1 / inv_runs)


def _parts(
    measurement: float, sample: Optional[float], prompt: Optional[float], n_prompts: int, m: float, r: float
) -> VarianceParts:
    """Package the components with their shares of the variance of the mean and a reading."""
    contribution = {"measurement": measurement / (n_prompts * m * r)}
    if sample is not None:
        contribution["sample"] = sample / (n_prompts * m)
    if prompt is not None:
        contribution["prompt"] = prompt / n_prompts
    if sample is None:
        note = "one sample per prompt: the sample part cannot be told apart"
    elif contribution["measurement"] > contribution["sample"]:
        note = "measurement noise outweighs sample spread: more runs per sample narrow the interval"
    else:
        note = "sample spread outweighs measurement noise: more samples narrow the interval, more runs hardly"
    if prompt is not None and prompt / n_prompts > max(contribution.values()) - 1e-12:
        note += "; the prompt part is the largest: more prompts narrow it most"
    return VarianceParts(measurement, sample, prompt, contribution, m, r, note)


# ---------------------------------------------------------------- the JSON document


def _r(v: Optional[float]) -> Optional[float]:
    return None if v is None else round(v, 4)


def _ci(ci: Optional[tuple[float, float]]) -> Optional[list[float]]:
    return None if ci is None else [round(ci[0], 4), round(ci[1], 4)]


def board_dict(board: Leaderboard) -> dict[str, Any]:
    """The leaderboard as a JSON-ready dict: seed, resamples, systems (best first), pairs."""
    return {
        "seed": board.seed,
        "resamples": board.resamples,
        "level": LEVEL,
        "method": (
            "hierarchical bootstrap (prompts, then samples within prompts; one prompt draw shared by "
            "all systems), expanded percentile intervals"
        ),
        "groups": board.groups,
        "systems": [_system_dict(s) for s in board.systems],
        "pairs": [
            {
                "a": p.a,
                "b": p.b,
                "diff": _r(p.diff),
                "ci": _ci(p.ci),
                "separated": p.separated,
                "prompts": p.prompts,
                "note": p.note,
            }
            for p in board.pairs
        ],
    }


def _system_dict(s: SystemResult) -> dict[str, Any]:
    v = s.variance
    return {
        "system": s.system,
        "mean": _r(s.total.mean),
        "ci": _ci(s.total.ci),
        "rank": s.rank,
        "rank_range": None if s.rank_range is None else list(s.rank_range),
        "prompts": s.prompts,
        "samples": s.samples,
        "runs": s.runs,
        "missing": s.missing,
        "missing_candidates": s.missing_candidates,
        "note": s.total.note,
        "groups": {g: {"mean": _r(e.mean), "ci": _ci(e.ci), "note": e.note} for g, e in s.groups.items()},
        "variance": None
        if v is None
        else {
            "measurement": _r(v.measurement),
            "sample": _r(v.sample),
            "prompt": _r(v.prompt),
            "contribution": {k: _r(x) for k, x in v.contribution.items()},
            "samples_per_prompt": _r(v.samples_per_prompt),
            "runs_per_sample": _r(v.runs_per_sample),
            "note": v.note,
        },
    }
