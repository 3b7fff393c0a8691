"""The leaderboard's input from the review store: one ScoreRow per run of every candidate
that has a manifest, and the refusals that keep the table honest.

A run's 100-point total is its automated items (the bench's points, or reviewers'
overrides) plus the candidate's manual items as finalised: the reviews standing when an admin
finalised the sheet (judging/sheet_totals.build_sheet, as the review app builds the sheet).
A candidate not finalised yet, or with an item still missing, has no total: None, counted as
missing, never zero. Each rubric row (the sheet's groups) gives its subtotal as an extra
metric. Runs of the same file are its repeated measurements (`run` 1, 2, ... by start time).

Refused with one line (UserError): an empty store, no manifest, a single prompt, nothing
finalised yet, and runs from unlike environments (environment.comparable) unless the caller
allows mixing, in which case `notes` says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from skycity_bench.analysis.leaderboard_stats import DEFAULT_RESAMPLES, DEFAULT_SEED, Leaderboard, ScoreRow, leaderboard
from skycity_bench.common import environment
from skycity_bench.common.errors import UserError
from skycity_bench.judging.sheet_totals import Review, build_sheet
from skycity_bench.store.manifests import Manifest, manifests
from skycity_bench.store.sql import _q

if TYPE_CHECKING:
    from skycity_bench.store.review_store import ReviewStore


@dataclass
class StoreRows:
    """What the store gives the leaderboard: the rows, each row's environment (by candidate
    and run), the candidates left out (no manifest) and the notes the output must carry."""

    rows: list[ScoreRow]
    environments: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    without_manifest: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class StoreBoard:
    board: Leaderboard
    notes: list[str]
    mixed_environments: bool

    def to_dict(self) -> dict[str, Any]:
        """The JSON document `leaderboard --db --format json` writes and the admin's API serves."""
        return {**self.board.to_dict(), "notes": list(self.notes), "mixed_environments": self.mixed_environments}


def _finalised_reviews(store: ReviewStore) -> dict[str, list[Review]]:
    """Per finalised candidate, the reviews standing when its sheet was finalised (as the
    review app's sheet counts them); a candidate not finalised has none here."""
    with store.db.read() as con:
        fin = {r["candidate_id"]: r["at"] for r in _q(con, "SELECT candidate_id, at FROM finalized")}
        rows = _q(
            con,
            "SELECT v.*, w.name FROM reviews v JOIN reviewers w ON w.id = v.reviewer_id "
            "WHERE v.superseded_by IS NULL ORDER BY v.id",
        ).all()
    out: dict[str, list[Review]] = {c: [] for c in fin}
    for r in rows:
        c = r["candidate_id"]
        if c in fin and r["created_at"] <= fin[c]:
            out[c].append(
                Review(
                    r["name"],
                    r["item_id"],
                    r["kind"],
                    r["points"],
                    r["share"],
                    r["comment"],
                    r["reason"],
                    r["created_at"],
                    r["id"],
                )
            )
    return out


def _runs(store: ReviewStore, cids: list[str]) -> list[dict[str, Any]]:
    """Every run of these candidates with its sheet facts (masked items, environment), the
    facts from the store's parsed sheet summaries (kept parsed by run id, as the sheets read
    them: a run never changes), so a page view neither reads nor parses them again."""
    store._catch_up()  # runs imported before run_summaries existed get theirs first
    wanted = set(cids)
    with store.db.read() as con:
        runs = [
            {"candidate_id": r["candidate_id"], "run_id": r["run_id"]}
            for r in _q(
                con,
                "SELECT candidate_id, run_id FROM run_summaries ORDER BY candidate_id, started_at, run_id",
            )
            if r["candidate_id"] in wanted
        ]
        docs = store._sheet_docs(con, [r["run_id"] for r in runs])
    return [{**r, "doc": docs[r["run_id"]]} for r in runs]


def store_rows(store: ReviewStore) -> StoreRows:
    """One ScoreRow per run of every candidate with a manifest (see the module's docstring)."""
    cands = store.candidates()
    if not cands:
        raise UserError(f"{store.path}: the store holds no candidates (import runs first)")
    mans = manifests(store)
    if not mans:
        raise UserError(
            f"{store.path}: no candidate has a manifest (system, prompt, sample): "
            "import the runs with --manifest manifest.csv"
        )
    reviews = _finalised_reviews(store)
    out = StoreRows([], without_manifest=len([c for c in cands if c not in mans]))
    counter: dict[str, int] = {}
    for run in _runs(store, sorted(mans)):
        cid = run["candidate_id"]
        counter[cid] = counter.get(cid, 0) + 1
        out.rows.append(_row(store, cid, mans[cid], str(counter[cid]), run["doc"], reviews.get(cid)))
        out.environments[(cid, str(counter[cid]))] = run["doc"].get("environment") or {}
    if out.without_manifest:
        out.notes.append(f"{out.without_manifest} candidate(s) without a manifest are left out")
    return out


def _row(
    store: ReviewStore, cid: str, m: Manifest, run: str, doc: dict[str, Any], reviews: Optional[list[Review]]
) -> ScoreRow:
    """One run's total and row subtotals; not finalised (reviews None) → every manual item
    missing, so no total."""
    sheet = build_sheet(store.rubric, cid, doc, reviews or [])
    final = reviews is not None
    groups = {r.row_id: (r.subtotal if final else None) for r in sheet.rows}
    return ScoreRow(m.system, m.prompt, m.sample, run, sheet.total if final else None, groups)


def environment_difference(envs: dict[tuple[str, str], dict[str, Any]]) -> Optional[str]:
    """None when every run's environment is comparable with the first; else one line naming
    the two candidates and what differs."""
    items = sorted(envs.items())
    if not items:
        return None
    (first, e0) = items[0]
    for key, env in items[1:]:
        ok, why = environment.comparable(e0, env)
        if not ok:
            return f"{first[0]} run {first[1]} vs {key[0]} run {key[1]}: {'; '.join(why[:2])}"
    return None


def check_rows(data: StoreRows) -> None:
    """The refusals that depend on the rows: a single prompt, nothing complete."""
    prompts = sorted({r.prompt for r in data.rows})
    if len(prompts) < 2:
        raise UserError(
            f"every candidate answers one prompt ({prompts[0] if prompts else 'none'}): "
            "a leaderboard needs at least 2 prompts for its intervals"
        )
    if all(r.total is None for r in data.rows):
        cands = len({(r.system, r.prompt, r.sample) for r in data.rows})
        raise UserError(f"no candidate has a total yet: all {cands} are missing reviews (finalise their sheets)")


def store_board(
    store: ReviewStore,
    *,
    allow_mixed_env: bool = False,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> StoreBoard:
    """The leaderboard of the store's round, or a UserError saying why there is none."""
    data = store_rows(store)
    check_rows(data)
    notes = list(data.notes)
    diff = environment_difference(data.environments)
    if diff is not None and not allow_mixed_env:
        raise UserError(f"runs from unlike environments ({diff}); pass --allow-mixed-env to rank them anyway")
    if diff is not None:
        notes.append(f"MIXED ENVIRONMENTS (--allow-mixed-env): {diff}")
    missing = len({(r.system, r.prompt, r.sample) for r in data.rows if r.total is None})
    if missing:
        notes.append(f"{missing} candidate(s) still missing reviews: counted as missing, never as zero")
    board = leaderboard(data.rows, resamples=resamples, seed=seed)
    return StoreBoard(board, notes, diff is not None)
