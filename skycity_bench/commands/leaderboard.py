"""`skycity-bench leaderboard --scores FILE.csv`: which system builds better Sky City demos,
with honest error bars.

The CSV holds one row per measurement: `system,prompt,sample,run,total` and optional
`group:NAME` columns (the sheet's groups); an empty total is a candidate still missing
reviews and is counted as missing, never as zero. The statistics (hierarchical bootstrap over
prompts and samples, paired differences, rank ranges, variance components) live in
analysis/leaderboard_stats.py; this module reads, checks and renders (table, json, csv, html)."""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from skycity_bench.common.errors import UserError

if TYPE_CHECKING:
    from skycity_bench.analysis.leaderboard_stats import Leaderboard, ScoreRow

FORMATS = ("table", "json", "csv", "html")
MIXED = "MIXED ENVIRONMENTS"  # how store/leaderboard_rows.py starts the note when mixing is allowed


def register(app: typer.Typer) -> None:
    @app.command("leaderboard")
    def leaderboard_cmd(
        scores: Optional[Path] = typer.Option(
            None, "--scores", help="CSV: system,prompt,sample,run,total[,group:NAME ...]"
        ),
        db: Optional[str] = typer.Option(
            None, "--db", help="review store (a file or a postgresql:// URL): its candidates with a manifest"
        ),
        fmt: str = typer.Option("table", "--format", "-f", help="table | json | csv | html"),
        out: Optional[Path] = typer.Option(None, "--out", "-o", help="write here instead of stdout"),
        seed: Optional[int] = typer.Option(
            None, "--seed", help="bootstrap seed (default 20240; printed in the output)"
        ),
        resamples: Optional[int] = typer.Option(None, "--resamples", help="bootstrap resamples (default 2000)"),
        figure: Optional[Path] = typer.Option(None, "--figure", help="also write the figure here (PNG)"),
        allow_mixed_env: bool = typer.Option(
            False, "--allow-mixed-env", help="--db: rank runs from unlike environments anyway (the output says so)"
        ),
    ) -> None:
        """Rank systems by mean 100-point total with 95 % intervals, rank ranges and paired
        differences (prompts weigh equally; missing totals are counted, never zero)."""
        from skycity_bench.analysis.leaderboard_stats import DEFAULT_RESAMPLES, DEFAULT_SEED

        if fmt not in FORMATS:
            raise UserError(f"--format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
        if (scores is None) == (db is None):
            raise UserError("give exactly one of --scores FILE.csv and --db STORE")
        opts = {
            "resamples": DEFAULT_RESAMPLES if resamples is None else resamples,
            "seed": DEFAULT_SEED if seed is None else seed,
        }
        board, notes = (
            _from_scores(scores, **opts) if scores is not None else _from_store(str(db), allow_mixed_env, **opts)
        )
        text = render(board, fmt, notes)
        if out is None:
            typer.echo(text, nl=not text.endswith("\n"))
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
            typer.echo(f"wrote {out}", err=True)
        if figure is not None:
            from skycity_bench.media.leaderboard_figure import write_leaderboard_figure

            write_leaderboard_figure(figure, figure_rows(board))
            typer.echo(f"wrote {figure}", err=True)


def _from_scores(path: Path, *, resamples: int, seed: int) -> tuple[Leaderboard, list[str]]:
    from skycity_bench.analysis.leaderboard_stats import leaderboard

    return leaderboard(read_scores(path), resamples=resamples, seed=seed), []


def _from_store(target: str, allow_mixed_env: bool, *, resamples: int, seed: int) -> tuple[Leaderboard, list[str]]:
    """The store's round (store/leaderboard_rows.py): refusals are one-line UserErrors."""
    from skycity_bench.store.leaderboard_rows import store_board
    from skycity_bench.store.review_store import ReviewStore

    store = ReviewStore(target, create=False)
    try:
        res = store_board(store, allow_mixed_env=allow_mixed_env, resamples=resamples, seed=seed)
    finally:
        store.close()
    return res.board, res.notes


def read_scores(path: Path) -> list[ScoreRow]:
    """Rows from the scores CSV; every malformed input is a one-line UserError."""
    from skycity_bench.analysis.leaderboard_stats import REQUIRED_COLUMNS, rows_from_records

    if not path.is_file():
        raise UserError(f"{path}: no such file")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a UTF-8 text file") from None
    if not text.strip():
        raise UserError(f"{path}: empty file (expected a header: {','.join(REQUIRED_COLUMNS)})")
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in reader.fieldnames or []]
    reader.fieldnames = header
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise UserError(f"{path}: missing column(s) {', '.join(missing)} (have {', '.join(header)})")
    try:
        rows = rows_from_records(reader)
    except UserError as e:
        raise UserError(f"{path}: {e}") from None
    if not rows:
        raise UserError(f"{path}: a header but no score rows")
    return rows


def render(board: Leaderboard, fmt: str, notes: Sequence[str] = ()) -> str:
    """The board in one format; `notes` (what the reader must know: mixed environments,
    candidates left out) go into every format."""
    if fmt == "json":
        return json.dumps(board_json(board, notes), ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        return to_csv(board, notes)
    if fmt == "html":
        return to_html(board, notes)
    return to_table(board, notes)


def board_json(board: Leaderboard, notes: Sequence[str] = ()) -> dict[str, Any]:
    """The JSON document (the issue's shape; `notes` and `mixed_environments` added)."""
    doc = board.to_dict()
    doc["notes"] = list(notes)
    doc["mixed_environments"] = any(n.startswith(MIXED) for n in notes)
    return doc


def figure_rows(board: Leaderboard) -> list[dict[str, Any]]:
    """What the figure needs per system (plain data: the media layer knows no statistics)."""
    return [
        {"system": s.system, "mean": s.total.mean, "ci": s.total.ci, "candidates": s.candidates} for s in board.systems
    ]


def _num(v: Optional[float], digits: int = 1) -> str:
    return "" if v is None else f"{v:.{digits}f}"


def _ci(ci: Optional[tuple[float, float]]) -> str:
    return "—" if ci is None else f"[{ci[0]:.1f}, {ci[1]:.1f}]"


def _rank_range(r: Optional[tuple[int, int]]) -> str:
    return "—" if r is None else (str(r[0]) if r[0] == r[1] else f"{r[0]}–{r[1]}")


def system_cells(board: Leaderboard) -> tuple[list[str], list[list[str]]]:
    """The systems table as text cells (shared by the terminal table and the HTML page)."""
    head = ["rank", "system", "mean", "95 % interval", "rank range", "prompts", "samples", "missing"]
    head += [f"{g}" for g in board.groups] + ["note"]
    rows = []
    for s in board.systems:
        row = [str(s.rank or "—"), s.system, _num(s.total.mean), _ci(s.total.ci), _rank_range(s.rank_range)]
        row += [str(s.prompts), str(s.samples), str(s.missing)]
        row += [f"{_num(s.groups[g].mean)} {_ci(s.groups[g].ci)}".strip() for g in board.groups]
        rows.append(row + [s.total.note or ""])
    return head, rows


def pair_cells(board: Leaderboard) -> tuple[list[str], list[list[str]]]:
    head = ["a", "b", "mean(a) − mean(b)", "95 % interval", "separated", "shared prompts"]
    rows = [[p.a, p.b, _num(p.diff), _ci(p.ci), "yes" if p.separated else "no", str(p.prompts)] for p in board.pairs]
    return head, rows


def variance_lines(board: Leaderboard) -> list[str]:
    """One line per system measured more than once: its variance parts and what would help."""
    out = []
    for s in board.systems:
        v = s.variance
        if v is None:
            continue
        parts = ", ".join(f"{k} {x:.2f}" for k, x in v.contribution.items())
        out.append(f"{s.system}: variance of the mean by level (points²): {parts}; {v.note}")
    return out


def _footer(board: Leaderboard) -> str:
    return (
        f"seed {board.seed}, {board.resamples} resamples; hierarchical bootstrap over prompts then samples, "
        "one prompt draw shared by all systems; missing totals are counted, never zero"
    )


def terminal_tables(board: Leaderboard) -> list[tuple[str, tuple[list[str], list[list[str]]]]]:
    """The terminal's tables: the systems, then their sheet groups (a system's row with a
    column per group would not fit a terminal: every cell would wrap), then the pairs."""
    head, rows = system_cells(board)
    n = len(board.groups)
    out = [("leaderboard", ([*head[:8], head[-1]], [[*r[:8], r[-1]] for r in rows]))]
    if n:
        groups = (["system", *head[8 : 8 + n]], [[r[1], *r[8 : 8 + n]] for r in rows])
        out.append(("per sheet group: mean [95 % interval]", groups))
    return out + [("pairwise differences", pair_cells(board))]


def to_table(board: Leaderboard, notes: Sequence[str] = ()) -> str:
    from rich.console import Console
    from rich.table import Table

    console = Console(record=True, width=140, file=io.StringIO())
    for title, (head, rows) in terminal_tables(board):
        table = Table(title=title, title_justify="left")
        for h in head:
            table.add_column(h)
        for r in rows:
            table.add_row(*r)
        console.print(table)
    for line in variance_lines(board):
        console.print(line, highlight=False, soft_wrap=True)
    for note in notes:
        console.print(f"note: {note}", highlight=False, soft_wrap=True)
    console.print(_footer(board), highlight=False, soft_wrap=True)
    return console.export_text()


def to_csv(board: Leaderboard, notes: Sequence[str] = ()) -> str:
    """One row per system, best first; the seed and resample count on every row (and the
    notes, joined, when there are any)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    head = ["rank", "system", "mean", "ci_lo", "ci_hi", "rank_best", "rank_worst", "prompts", "samples", "runs"]
    head += ["missing", "missing_candidates", "note", *(f"group:{g}" for g in board.groups), "seed", "resamples"]
    w.writerow(head + (["notes"] if notes else []))
    for s in board.systems:
        ci = s.total.ci or (None, None)
        rr = s.rank_range or (None, None)
        row: list[Any] = [s.rank, s.system, _num(s.total.mean, 4), _num(ci[0], 4), _num(ci[1], 4), *rr]
        row += [s.prompts, s.samples, s.runs, s.missing, s.missing_candidates, s.total.note or ""]
        row += [_num(s.groups[g].mean, 4) for g in board.groups] + [board.seed, board.resamples]
        row += ["; ".join(notes)] if notes else []
        w.writerow(["" if v is None else v for v in row])
    return buf.getvalue()


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def to_html(board: Leaderboard, notes: Sequence[str] = ()) -> str:
    """A small self-contained page: both tables and the figure as an inline PNG."""
    import base64

    from skycity_bench.media.leaderboard_figure import leaderboard_png

    png = base64.b64encode(leaderboard_png(figure_rows(board))).decode("ascii")
    variance = "".join(f"<li>{html.escape(line)}</li>" for line in variance_lines(board))
    style = (
        "body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}th{background:#f3f3f3}"
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Sky City leaderboard</title>'
        f"<style>{style}</style></head><body>\n<h1>Sky City leaderboard</h1>\n"
        f"{_html_table(*system_cells(board))}\n"
        f'<img alt="means, intervals and candidates per system" src="data:image/png;base64,{png}">\n'
        f"<h2>Pairwise differences</h2>\n{_html_table(*pair_cells(board))}\n"
        + (f"<h2>Runs versus samples</h2><ul>{variance}</ul>\n" if variance else "")
        + "".join(f'<p class="note"><strong>note:</strong> {html.escape(n)}</p>\n' for n in notes)
        + f"<p>{html.escape(_footer(board))}</p>\n</body></html>\n"
    )
