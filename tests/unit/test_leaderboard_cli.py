"""`skycity-bench leaderboard`: the four output formats and the figure from a fixture CSV,
and one-line errors (exit 2, no traceback) for an empty file, missing columns, a single
prompt and a non-numeric total."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skycity_bench.cli import app
from skycity_bench.common.errors import UserError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "leaderboard"
SCORES = FIXTURES / "scores.csv"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def invoke(*args: object):
    return CliRunner().invoke(app, ["leaderboard", *(str(a) for a in args)])


def test_should_write_the_json_shape_with_missing_totals_counted():
    res = invoke("--scores", SCORES, "--format", "json", "--seed", 7, "--resamples", 2000)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert (doc["seed"], doc["resamples"]) == (7, 2000)
    assert [s["system"] for s in doc["systems"]] == ["atlas", "borealis", "cirrus"]
    by = {s["system"]: s for s in doc["systems"]}
    assert {s: (by[s]["prompts"], by[s]["samples"], by[s]["missing"]) for s in by} == {
        "atlas": (6, 18, 0),
        "borealis": (6, 18, 1),  # a third run not reviewed yet
        "cirrus": (6, 18, 1),  # a fourth candidate without any review
    }
    assert by["cirrus"]["missing_candidates"] == 1 and by["borealis"]["missing_candidates"] == 0
    for s in doc["systems"]:
        assert s["ci"][0] < s["mean"] < s["ci"][1] and len(s["rank_range"]) == 2
        assert set(s["groups"]) == {"motion", "packaging"} and s["variance"]["measurement"] > 0
    assert [(p["a"], p["b"]) for p in doc["pairs"]] == [
        ("atlas", "borealis"),
        ("atlas", "cirrus"),
        ("borealis", "cirrus"),
    ]
    for p in doc["pairs"]:
        assert p["diff"] == pytest.approx(by[p["a"]]["mean"] - by[p["b"]]["mean"], abs=1e-3)
        assert p["separated"] == (p["ci"][0] > 0 or p["ci"][1] < 0)
    assert invoke("--scores", SCORES, "--format", "json", "--seed", 7).stdout == res.stdout  # seeded


def test_should_print_a_table_with_the_seed_and_write_csv_rows_per_system(tmp_path):
    table = invoke("--scores", SCORES)
    assert table.exit_code == 0, table.output
    assert "atlas" in table.stdout and "rank range" in table.stdout and "seed 20240, 2000 resamples" in table.stdout
    out = tmp_path / "board.csv"
    res = invoke("--scores", SCORES, "--format", "csv", "--out", out)
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert [r["system"] for r in rows] == ["atlas", "borealis", "cirrus"]
    assert rows[0]["seed"] == "20240" and float(rows[0]["ci_lo"]) < float(rows[0]["mean"]) < float(rows[0]["ci_hi"])


def test_should_write_a_self_contained_html_page_and_the_figure(tmp_path):
    page, fig = tmp_path / "board.html", tmp_path / "fig" / "board.png"
    res = invoke("--scores", SCORES, "--format", "html", "--out", page, "--figure", fig, "--resamples", 500)
    assert res.exit_code == 0, res.output
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!doctype html>") and 'src="data:image/png;base64,' in text
    assert "atlas" in text and "Pairwise differences" in text and "seed 20240, 500 resamples" in text
    assert "http://" not in text and "https://" not in text  # nothing fetched from elsewhere
    assert fig.read_bytes().startswith(PNG_MAGIC)


@pytest.mark.parametrize(
    ("fixture", "message"),
    [
        ("empty.csv", "empty file"),
        ("missing_columns.csv", "missing column(s) run"),
        ("single_prompt.csv", "a single prompt (harbour)"),
        ("non_numeric.csv", "line 3: total is not a number: 'sixty'"),
    ],
)
def test_should_refuse_bad_input_with_one_line(fixture, message):
    res = invoke("--scores", FIXTURES / fixture)
    assert isinstance(res.exception, UserError) and message in str(res.exception), res.output
    assert "\n" not in str(res.exception)


def test_should_exit_2_without_a_traceback_from_the_real_command():
    for fixture in ("empty.csv", "non_numeric.csv"):
        done = subprocess.run(
            [sys.executable, "-m", "skycity_bench", "leaderboard", "--scores", str(FIXTURES / fixture)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert done.stderr.startswith("error: ")


def test_should_refuse_an_unknown_format():
    res = invoke("--scores", SCORES, "--format", "xml")
    assert isinstance(res.exception, UserError) and "--format" in str(res.exception)
