"""The rubric as data: its hash is pinned, its Chinese wording is the spec's byte for byte,
and its values add up."""

from pathlib import Path

import pytest
import yaml

from skycity_bench.inputs.rubric import DEFAULT_RUBRIC, load_rubric, render_canonical, render_markdown

# The SHA-256 of the rendered (canonical) skycity-v1. A change here means the rubric was
# edited in place: make a new file with a new id instead (review-principles.md).
PINNED_SHA256 = "3b37d36da9af2367fcec89d5c6706847df16785d282dcba05cd3406324ca3102"

SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec" / "skycity-rubric.zh.md"
SHEET_ITEMS = Path(__file__).resolve().parents[3] / "shared" / "spec" / "sheet-items.md"


def test_should_keep_the_pinned_hash_of_the_rendered_rubric():
    r = load_rubric()
    assert r.id == "skycity-v1"
    assert r.sha256 == PINNED_SHA256, "rubric skycity-v1 changed in place: release a new rubric id instead"


def test_should_change_the_hash_when_any_wording_changes(tmp_path):
    raw = DEFAULT_RUBRIC.read_text(encoding="utf-8")
    edited = tmp_path / "edited.yaml"
    edited.write_text(raw.replace("完整实现且具有明确设计意图", "完整实现并具有明确设计意图"), encoding="utf-8")
    assert load_rubric(edited).sha256 != PINNED_SHA256


def test_should_not_change_the_hash_for_comments_or_layout(tmp_path):
    raw = DEFAULT_RUBRIC.read_text(encoding="utf-8")
    relaid = tmp_path / "relaid.yaml"
    relaid.write_text("# another comment\n" + raw.replace("\nitems:", "\n\n\nitems:"), encoding="utf-8")
    assert load_rubric(relaid).sha256 == PINNED_SHA256


@pytest.mark.skipif(not SPEC.is_file(), reason="the shared spec is not beside this checkout")
def test_should_quote_the_rubric_wording_byte_for_byte():
    spec = SPEC.read_text(encoding="utf-8")
    r = load_rubric()
    quoted = [r.title, r.levels_intro] + [n["zh"] for n in r.review_notes]
    for row in r.rows:
        quoted += [row.dimension, row.content, row.method, row.cases]
        assert f"| {row.dimension} | {row.points:g} | {row.content} | {row.method} | {row.cases} |" in spec
    for lv in r.levels:
        assert f"| {lv.name} | {lv.percent}% | {lv.text} |" in spec
    for it in r.items:
        quoted += [it.text, *it.hints, *it.rules]
    for s in quoted:
        assert s and s in spec, s
    # every 常见失分点 line is given to at least one item
    tail = spec.split("## 常见失分点", 1)[1]
    for line in [x[2:] for x in tail.splitlines() if x.startswith("- ")]:
        assert any(line in it.hints for it in r.items), line


@pytest.mark.skipif(not SHEET_ITEMS.is_file(), reason="the shared spec is not beside this checkout")
def test_should_carry_the_values_and_kinds_of_sheet_items():
    r = load_rubric()
    rows = [ln.split("|") for ln in SHEET_ITEMS.read_text(encoding="utf-8").splitlines() if ln.startswith("| ")]
    table = {c[1].strip(): (float(c[2]), c[3].split()[0]) for c in rows if "." in c[1] and c[2].strip().isdigit()}
    assert sorted(table) == sorted(r.ids)
    for iid, (pts, how) in table.items():
        assert (r.item(iid).points, r.item(iid).how) == (pts, how)


def test_should_group_items_into_rows_whose_subtotals_add_up():
    r = load_rubric()
    assert sum(row.points for row in r.rows) == r.total
    assert sorted(i for row in r.rows for i in row.items) == sorted(r.ids)
    assert [lv.percent for lv in r.sorted_levels()] == [100, 75, 50, 25, 0]
    for it in r.items:
        assert it.text_en and len(it.hints) == len(it.hints_en)


def test_should_refuse_rows_that_do_not_add_up(tmp_path):
    doc = yaml.safe_load(DEFAULT_RUBRIC.read_text(encoding="utf-8"))
    doc["rows"][0]["points"] = 31
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    with pytest.raises(Exception, match="row visual"):
        load_rubric(bad)


def test_should_keep_the_keys_scorers_read():
    r = load_rubric()
    assert r.item("density.count").get("full_at") == 50
    assert r.item("shops.hover").get("per_shop") == 1
    fp = r.item("smoothness.frame_pacing")
    assert fp.get("long_frame_ms") == 50 and fp.get("floor_points") == 0 and len(fp.get("tiers")) == 4
    assert r.objective_partial_share == 0.5
    assert r.item("camera.motion").get("hints") == r.item("camera.motion").hints
    assert r.item("camera.motion").get("no_such_key", "d") == "d"


def test_should_render_markdown_in_both_languages():
    md = render_markdown(load_rubric())
    assert "视觉表现与设计统一性 / Visual quality and design coherence" in md
    assert "| 良好 / Good | 75% |" in md
    assert render_canonical(load_rubric()).endswith("\n")
