"""The 100-point sheet: the bench's items and the reviewers' scores, aggregated per item,
with subtotals per rubric row and a total only when nothing is missing (review-principles.md).

Pure functions over data (no database, no browser), so the rules are tested on their own:
- graded items (manual, assisted): one score per reviewer (their latest); two reviewers
  more than `review.third_reviewer_above_share` of the value apart → the item waits for a
  third reviewer; with three or more the median stands, otherwise the mean; one reviewer →
  marked `single reviewer`; none → missing.
- automated items: the bench's points, unless reviewers overrode them with a written
  reason (their mean then stands, the bench's value and every reason are kept beside it);
  `untested` / `review` without an override → missing.
- a ranking only across candidates whose environments are comparable (environment.py).
"""

from __future__ import annotations

import csv
import io
import json
import re
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, is_dataclass, replace
from json.encoder import encode_basestring  # json's C escaper (ensure_ascii=False)
from typing import Any, Optional, cast

from skycity_bench.analysis.agreement import Agreement, Alpha
from skycity_bench.analysis.agreement import agreement as measure_agreement
from skycity_bench.common import environment
from skycity_bench.inputs.rubric import Rubric, RubricItem

EPS = 1e-9


@dataclass
class Review:
    """One reviewer's standing score on one item (the store passes only active ones)."""

    reviewer: str
    item_id: str
    kind: str  # "grade" (five levels) | "override" (automated item, with reason)
    points: float
    share: Optional[float] = None  # grade: the level's share
    comment: str = ""
    reason: str = ""
    created_at: str = ""
    id: Optional[int] = None


@dataclass
class ItemLine:
    item_id: str
    text: str
    text_en: str
    how: str
    max: float
    points: Optional[float] = None
    method: str = ""  # bench | mean | median | single reviewer | override
    bench_status: Optional[str] = None
    bench_points: Optional[float] = None
    flags: list[str] = field(default_factory=list)
    missing: Optional[str] = None  # why there are no points yet
    raw: list[dict[str, Any]] = field(default_factory=list)

    @property
    def graded_or_overridden(self) -> bool:
        return self.how != "auto" or self.method == "override"


@dataclass
class RowLine:
    row_id: str
    dimension: str
    dimension_en: str
    max: float
    subtotal: Optional[float]
    items: list[ItemLine]


@dataclass
class CandidateSheet:
    candidate_id: str
    rubric_id: str
    rows: list[RowLine]
    total: Optional[float]
    missing: list[str]
    environment: dict[str, Any] = field(default_factory=dict)
    label: Optional[str] = None  # only when unblinding
    finalized: bool = False
    run_id: Optional[int] = None

    @property
    def items(self) -> list[ItemLine]:
        return [i for r in self.rows for i in r.items]


def _latest_per_reviewer(reviews: list[Review]) -> list[Review]:
    by: dict[str, Review] = {}
    for r in sorted(reviews, key=lambda r: (r.created_at, r.id or 0)):
        by[r.reviewer] = r
    return sorted(by.values(), key=lambda r: r.reviewer)


def _levels_apart(rubric: Rubric, item: RubricItem, a: float, b: float) -> int:
    order = [lv.share for lv in rubric.sorted_levels()]
    try:
        ia = order.index(rubric.level_for_points(item, a).share)
        ib = order.index(rubric.level_for_points(item, b).share)
        return abs(ia - ib)
    except KeyError:
        return 0


def aggregate_item(
    rubric: Rubric, item: RubricItem, bench: Optional[dict[str, Any]], reviews: list[Review]
) -> ItemLine:
    """One item's line. `bench` is the report's item (dict with points/status/evidence) or None."""
    line = ItemLine(item.id, item.text, item.text_en, item.how, item.points)
    if bench is not None:
        line.bench_status, line.bench_points = bench.get("status"), bench.get("points")
    rules = rubric.review
    if item.graded:
        grades = _latest_per_reviewer([r for r in reviews if r.kind == "grade"])
        line.raw = [
            {"reviewer": r.reviewer, "points": r.points, "share": r.share, "comment": r.comment, "at": r.created_at}
            for r in grades
        ]
        vals = [r.points for r in grades]
        if len(vals) < rules.min_reviewers or not vals:
            line.missing = f"waiting for reviewers ({len(vals)} of {rules.min_reviewers})"
        elif len(vals) == 1:
            line.points, line.method = vals[0], "single reviewer"
            line.flags.append("single reviewer")
        elif len(vals) == 2:
            gap = abs(vals[0] - vals[1])
            if gap > rules.third_reviewer_above_share * item.points + EPS:
                n = _levels_apart(rubric, item, vals[0], vals[1])
                line.flags.append("needs third reviewer")
                line.missing = (
                    f"two reviewers {n} levels apart ({vals[0]:g} vs {vals[1]:g}): waiting for a third reviewer"
                )
            else:
                line.points, line.method = statistics.fmean(vals), "mean"
        else:
            line.points, line.method = float(statistics.median(vals)), "median"
        return line
    overrides = _latest_per_reviewer([r for r in reviews if r.kind == "override"])
    if overrides:
        line.raw = [
            {"reviewer": r.reviewer, "points": r.points, "reason": r.reason, "at": r.created_at} for r in overrides
        ]
        line.points = statistics.fmean(r.points for r in overrides)
        line.method = "override"
        line.flags.append("overridden by reviewer")
        return line
    if bench is None:
        line.missing = "no bench run"
    elif bench.get("points") is None:
        reason = (bench.get("evidence") or {}).get("reason") or bench.get("status")
        line.missing = f"{bench.get('status')}: {reason}"
    else:
        line.points, line.method = float(bench["points"]), "bench"
    return line


def build_sheet(
    rubric: Rubric,
    candidate_id: str,
    report: Optional[dict[str, Any]],
    reviews: list[Review],
    *,
    label: Optional[str] = None,
    finalized: bool = False,
    run_id: Optional[int] = None,
) -> CandidateSheet:
    """The sheet of one candidate from its (latest) report dict and the reviews of it."""
    bench_items = (report or {}).get("items") or {}
    rows = []
    missing: list[str] = []
    for row in rubric.row_groups():
        lines = []
        for iid in row.items:
            item = rubric.item(iid)
            line = aggregate_item(rubric, item, bench_items.get(iid), [r for r in reviews if r.item_id == iid])
            if line.missing:
                missing.append(f"{iid}: {line.missing}")
            lines.append(line)
        pts = [x.points for x in lines if x.points is not None]
        sub = None if len(pts) < len(lines) else round(sum(pts), 2)
        rows.append(RowLine(row.id, row.dimension, row.dimension_en, row.points, sub, lines))
    # a row without a subtotal has an item without points, and that item is missing
    total = None if missing else round(sum(cast(float, r.subtotal) for r in rows), 1)
    return CandidateSheet(
        candidate_id, rubric.id, rows, total, missing, (report or {}).get("environment") or {}, label, finalized, run_id
    )


def hide_reviews(s: CandidateSheet, note: str) -> CandidateSheet:
    """The sheet with every reviewer-given value blanked (for a reviewer who has not yet
    scored this candidate: nothing of other reviewers is visible before submitting)."""
    rows = []
    for r in s.rows:
        lines = [
            replace(i, points=None, raw=[], method="", flags=[], missing=note) if i.graded_or_overridden else i
            for i in r.items
        ]
        rows.append(replace(r, items=lines, subtotal=None if any(i.points is None for i in lines) else r.subtotal))
    return replace(
        s, rows=rows, total=None, missing=[f"{i.item_id}: {note}" for r in rows for i in r.items if i.missing]
    )


@dataclass
class Ranking:
    groups: list[list[CandidateSheet]]  # each group: comparable environments, best first
    not_ranked: list[tuple[CandidateSheet, str]]  # with the reason


def rank(sheets: list[CandidateSheet]) -> Ranking:
    """Rank complete sheets, only within groups of mutually comparable environments."""
    groups: list[list[CandidateSheet]] = []
    not_ranked: list[tuple[CandidateSheet, str]] = []
    complete = sorted((s for s in sheets if s.total is not None), key=lambda s: (-cast(float, s.total), s.candidate_id))
    for s in sheets:
        if s.total is None:
            not_ranked.append((s, f"{len(s.missing)} item(s) missing"))
    for s in complete:
        for g in groups:
            if all(environment.comparable(m.environment, s.environment)[0] for m in g):
                g.append(s)
                break
        else:
            groups.append([s])
    ranked = [g for g in groups if len(g) > 1]
    for g in groups:
        if len(g) == 1:
            reasons = [
                r
                for o in complete
                if o is not g[0]
                for r in [environment.comparable(o.environment, g[0].environment)[1]]
                if r
            ]
            why = (
                "; ".join(reasons[0][:2])
                if reasons
                else (
                    "not comparable with every member of any group"
                    if len(complete) > 1
                    else "no other complete candidate"
                )
            )
            not_ranked.append((g[0], f"no comparable environment ({why})"))
    return Ranking(ranked, not_ranked)


# --- rendering ------------------------------------------------------------------------
# Reasons, comments, bench reasons and labels come from people and from hostile demos: the
# exports escape them so they can neither break the table nor inject markup or formulas.

_MD_ESCAPE = re.compile(r"([\\`*_\[\]|])")
_NEWLINE = re.compile(r"\r\n|\r|\n")


def md_text(value: Any) -> str:
    """Text safe inside a Markdown table cell or list item: HTML made inert (entities, so a
    `<script>` is shown, never run), Markdown's active characters and the cell separator `|`
    backslash-escaped, line breaks (which would end the table row) as `<br>`."""
    text = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _NEWLINE.sub("<br>", _MD_ESCAPE.sub(r"\\\1", text))


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def csv_cell(value: Any) -> str:
    """A CSV cell a spreadsheet will not run: a text starting (even after spaces) with a
    formula prefix (= + - @ tab CR, OWASP's list) gets a leading apostrophe, shown as text.
    Plain numbers pass unchanged."""
    text = "" if value is None else str(value)
    if _NUMBER.fullmatch(text):
        return text
    if text.startswith(_FORMULA_START) or text.lstrip(" ").startswith(_FORMULA_START):
        return "'" + text
    return text


def _f(v: Optional[float], nd: int = 2) -> str:
    if v is None:
        return "—"
    return f"{v:.{nd}f}".rstrip("0").rstrip(".") if nd > 1 else f"{v:.{nd}f}"


def _raw_text(line: ItemLine) -> str:
    parts = []
    for r in line.raw:
        s = f"{r['reviewer']} {r['points']:g}"
        if r.get("reason"):
            s += f" (reason: {r['reason']})"
        if r.get("calibration"):  # the admin's sheet only (calibration.mark_sheet)
            s += f" [marked: {r['calibration']}]"
        parts.append(s)
    return ", ".join(parts)


def _agreement(sheets: list[CandidateSheet], agreement: Optional[Agreement]) -> Agreement:
    return agreement if agreement is not None else measure_agreement(sheets)


def _num(v: Optional[float], nd: int = 3) -> str:
    return "—" if v is None else f"{v:.{nd}f}"


def _interval(a: Alpha) -> str:
    return "—" if a.low is None else f"{a.low:.3f} – {a.high:.3f}"


def _verdict(a: Alpha) -> str:
    return ("⚠ " if a.flagged else "") + a.note


def to_markdown(
    sheets: list[CandidateSheet], ranking: Optional[Ranking] = None, agreement: Optional[Agreement] = None
) -> str:
    """The sheet as Markdown; every text that is not the sheet's own structure goes
    through md_text (reasons, comments, bench reasons, labels, names)."""
    out: list[str] = []
    for s in sheets:
        head = f"## {s.candidate_id}" + (f" — {md_text(s.label)}" if s.label else "") + f" ({md_text(s.rubric_id)})"
        out += [
            head,
            "",
            "| item | how | max | points | method | raw scores |",
            "| :--- | :--- | ---: | ---: | :--- | :--- |",
        ]
        for r in s.rows:
            out.append(
                f"| **{md_text(r.dimension)}** {md_text(r.dimension_en)} | | **{r.max:g}** | "
                f"**{_f(r.subtotal)}** | subtotal | |"
            )
            for i in r.items:
                meth = i.method + (
                    ""
                    if i.bench_points is None or i.method == "bench"
                    else f"; bench {i.bench_points:g} ({i.bench_status})"
                )
                if i.missing:
                    meth = f"missing: {i.missing}"
                out.append(
                    f"| `{i.item_id}` {md_text(i.text)} | {i.how} | {i.max:g} | {_f(i.points)} | "
                    f"{md_text(meth)} | {md_text(_raw_text(i))} |"
                )
        out.append("")
        if s.total is None:
            out.append(f"**total: —** (no total while {len(s.missing)} item(s) are missing)")
            out.append("")
            out.append("missing:")
            out += [f"- {md_text(m)}" for m in s.missing]
        else:
            single = [i.item_id for i in s.items if "single reviewer" in i.flags]
            out.append(
                f"**total: {s.total:.1f}** / {sum(r.max for r in s.rows):g}"
                + (f" (single reviewer: {', '.join(single)})" if single else "")
            )
        out.append("")
    out += _agreement_md(_agreement(sheets, agreement))
    if ranking is not None:
        out += _ranking_md(ranking)
    return "\n".join(out)


def _agreement_md(ag: Agreement) -> list[str]:
    out = [
        f"## agreement (Krippendorff's alpha, {ag.level})",
        "",
        f"95 % interval: percentile bootstrap over {ag.samples} resamples of the candidates (seed {ag.seed}); "
        f"candidates: those scored by at least two reviewers. Good from 0.8; below 0.667 the reviewers' "
        f"mean is not reliable.",
        "",
        "| item | alpha | 95 % interval | candidates | verdict |",
        "| :--- | ---: | :--- | ---: | :--- |",
    ]
    for a in [ag.overall, *ag.items]:
        name = "**overall**" if a is ag.overall else f"`{a.item_id}`"
        out.append(f"| {name} | {_num(a.alpha)} | {_interval(a)} | {a.candidates} | {_verdict(a)} |")
    out.append("")
    return out


def _ranking_md(ranking: Ranking) -> list[str]:
    out = ["## ranking", ""]
    if not ranking.groups:
        out.append("no ranking: fewer than two complete candidates with comparable environments")
    for k, g in enumerate(ranking.groups, 1):
        out.append(f"environment group {k}:")
        for pos, s in enumerate(g, 1):
            out.append(f"{pos}. {s.candidate_id}" + (f" — {md_text(s.label)}" if s.label else "") + f": {s.total:.1f}")
        out.append("")
    for s, why in ranking.not_ranked:
        out.append(
            f"- not ranked: {s.candidate_id}" + (f" — {md_text(s.label)}" if s.label else "") + f": {md_text(why)}"
        )
    return out


def to_csv(sheets: list[CandidateSheet], agreement: Optional[Agreement] = None) -> str:
    """One table; every cell through csv_cell (no formula reaches a spreadsheet). The
    agreement comes last, in rows whose candidate column reads `agreement`: points = alpha,
    method = the measure, missing = the verdict, raw = interval and candidates behind it."""
    buf = io.StringIO()
    w = csv.writer(buf)

    def row(*cells: Any) -> None:
        w.writerow([csv_cell(c) for c in cells])

    row("candidate", "label", "row", "item", "how", "max", "points", "method", "missing", "raw")
    for s in sheets:
        for r in s.rows:
            for i in r.items:
                row(
                    s.candidate_id,
                    s.label or "",
                    r.row_id,
                    i.item_id,
                    i.how,
                    f"{i.max:g}",
                    _f(i.points),
                    i.method,
                    i.missing or "",
                    _raw_text(i),
                )
            row(s.candidate_id, s.label or "", r.row_id, "subtotal", "", f"{r.max:g}", _f(r.subtotal), "", "", "")
        row(
            s.candidate_id,
            s.label or "",
            "",
            "total",
            "",
            "",
            "" if s.total is None else f"{s.total:.1f}",
            "",
            "; ".join(s.missing),
            "",
        )
    ag = _agreement(sheets, agreement)
    for a in [ag.overall, *ag.items]:
        row(
            "agreement",
            "",
            "",
            a.item_id,
            "",
            "",
            "" if a.alpha is None else f"{a.alpha:.4f}",
            f"krippendorff-alpha-{ag.level}",
            a.note,
            f"95% interval {_interval(a)}; {a.candidates} candidates; {a.scores} scores",
        )
    return buf.getvalue()


_FLOAT_NAMES = {float("inf"): "Infinity", -float("inf"): "-Infinity"}
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


def _float_text(v: float) -> str:
    """A float as json writes it (allow_nan: NaN, Infinity, -Infinity)."""
    if v != v:
        return "NaN"
    return _FLOAT_NAMES.get(v) or float.__repr__(v)


def _key_text(k: Any) -> str:
    """A dict key as json writes it (str, float, bool, None and int keys; others refused)."""
    if isinstance(k, str):
        return encode_basestring(k)
    if isinstance(k, float):
        return encode_basestring(_float_text(k))
    if k is True or k is False or k is None:
        return encode_basestring(json.dumps(k))
    if isinstance(k, int):
        return encode_basestring(int.__repr__(k))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(k).__name__}")


def _scalar_text(v: Any) -> str:
    """A value that is no container, by json's rules (subclasses of str, int, float too)."""
    if isinstance(v, str):
        return encode_basestring(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return int.__repr__(v)
    if isinstance(v, float):
        return _float_text(v)
    raise TypeError(f"Object of type {type(v).__name__} is not JSON serializable")


# the writers of the exact scalar types (a subclass takes the slower way, _scalar_text)
_SCALAR_TEXT: dict[type, Callable[[Any], str]] = {
    str: encode_basestring,
    float: _float_text,
    int: int.__repr__,
    bool: lambda v: "true" if v else "false",
    type(None): lambda _v: "null",
}


def _json_text(value: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, indent=2)`, byte for byte, with a dataclass
    written as the dict of its fields in order (what dataclasses.asdict gives, without
    copying every leaf first). Why not json.dumps itself: with `indent`, Python before 3.13
    encodes in pure Python through a chain of nested generators, each chunk handed up
    through every level; the sheet of a 50-candidate round (about 0.7 MB) would spend most of
    its request there. Here each chunk is appended once, strings escaped by json's own C
    function. Trees only (a cycle ends in RecursionError)."""
    out: list[str] = []
    put = out.append

    def pairs(v: Any, indent: str, items: Iterable[tuple[Any, Any]]) -> None:
        inner, lead = indent + "  ", "{\n"
        for key, x in items:
            put(lead + inner + (encode_basestring(key) if type(key) is str else _key_text(key)) + ": ")
            lead = ",\n"
            enc(x, inner)
        put("{}" if lead == "{\n" else "\n" + indent + "}")

    def enc(v: Any, indent: str) -> None:
        t = type(v)
        scalar = _SCALAR_TEXT.get(t)
        if scalar is not None:
            put(scalar(v))
        elif t is dict:
            pairs(v, indent, v.items())
        elif t is list or t is tuple:
            if not v:
                put("[]")
                return
            inner = indent + "  "
            put("[\n" + inner)
            for k, x in enumerate(v):
                if k:
                    put(",\n" + inner)
                enc(x, inner)
            put("\n" + indent + "]")
        elif is_dataclass(v) and not isinstance(v, type):
            pairs(v, indent, ((n, getattr(v, n)) for n in _field_names(t)))
        elif isinstance(v, (list, tuple, dict)):  # a subclass: as its base, as json does
            enc(dict(v) if isinstance(v, dict) else list(v), indent)
        else:
            put(_scalar_text(v))

    enc(value, "")
    return "".join(out)


def sheet_dict(s: CandidateSheet) -> dict[str, Any]:
    """A candidate's sheet for the JSON file: its fields (rows and items stay dataclasses,
    written by _json_text), without the environment, and without a label unless unblinded."""
    d = {n: getattr(s, n) for n in _field_names(CandidateSheet) if n != "environment"}
    if s.label is None:
        d.pop("label", None)
    return d


def to_json(
    sheets: list[CandidateSheet],
    ranking: Optional[Ranking] = None,
    reviews: Optional[list[Any]] = None,
    agreement: Optional[Agreement] = None,
) -> str:
    doc: dict[str, Any] = {
        "schema": "skycity-bench/sheet@1",
        "candidates": [sheet_dict(s) for s in sheets],
        "agreement": _agreement(sheets, agreement).to_dict(),
    }
    if ranking is not None:
        doc["ranking"] = {
            "groups": [
                [
                    {"candidate_id": s.candidate_id, "total": s.total, **({"label": s.label} if s.label else {})}
                    for s in g
                ]
                for g in ranking.groups
            ],
            "not_ranked": [{"candidate_id": s.candidate_id, "reason": why} for s, why in ranking.not_ranked],
        }
    if reviews is not None:
        doc["reviews"] = reviews
    return _json_text(doc)
