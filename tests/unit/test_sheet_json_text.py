"""The sheet's JSON file is written by sheet_totals' own writer (json.dumps with `indent` is
pure Python before 3.13, and the 50-candidate sheet spent most of its request there): its text
must be json.dumps(..., ensure_ascii=False, indent=2)'s, byte for byte, for any document,
and the sheet's JSON the same as the dataclasses' asdict written by json.dumps."""

from __future__ import annotations

import enum
import json
import math
import random
from collections import OrderedDict
from dataclasses import asdict

import pytest

from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.judging.sheet_totals import Review, _json_text, build_sheet, rank, to_json

R = load_rubric()


def reference(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


class Level(enum.IntEnum):
    GOOD = 75


class Share(float):
    pass


class Name(str):
    pass


ODD = [
    "",
    'quote " backslash \\ slash /',
    "line\nbreak\r\ttab\b\f and \x00\x1f controls",
    "中文 émoji 🎉 \u2028 \u2029 \ud800",  # a lone surrogate passes as json lets it
    0,
    -0.0,
    1e-05,
    1e16,
    123456789012345678901234567890,
    0.1 + 0.2,
    math.nan,
    math.inf,
    -math.inf,
    True,
    False,
    None,
    Level.GOOD,
    Share(0.75),
    Name("a name"),
    [],
    {},
    (),
    [[]],
    {"": {}},
    (1, "two", [3.0]),
    OrderedDict([("b", 1), ("a", 2)]),
    {3: "int key", 2.5: "float key", True: "bool key", None: "none key", "s": "str key"},
]


@pytest.mark.parametrize("value", ODD, ids=[repr(v)[:30] for v in ODD])
def test_should_write_each_kind_of_value_as_json_dumps_does(value):
    assert _json_text(value) == reference(value)
    assert _json_text({"k": [value, {"inner": value}]}) == reference({"k": [value, {"inner": value}]})


def _random_doc(rng: random.Random, depth: int = 0):
    if depth > 4 or rng.random() < 0.3:
        return rng.choice(ODD[:19] + [rng.random() * 10 ** rng.randint(-8, 20), rng.randint(-(10**12), 10**12)])
    if rng.random() < 0.5:
        return [_random_doc(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    return {
        rng.choice(["a", "b", "中", "k\n", str(depth)]) + str(i): _random_doc(rng, depth + 1)
        for i in range(rng.randint(0, 5))
    }


def test_should_match_json_dumps_on_random_nested_documents():
    rng = random.Random(7)
    for _ in range(300):
        doc = _random_doc(rng)
        assert _json_text(doc) == reference(doc)


def test_should_refuse_what_json_refuses():
    for bad in ({(1, 2): "tuple key"}, {"x": object()}, {1j}):
        with pytest.raises(TypeError):
            _json_text(bad)


def _sheets():
    graded = [i.id for i in R.items if i.graded]
    auto = [i.id for i in R.items if not i.graded]
    report = {
        "items": {
            it.id: ({"points": None, "status": "review"} if it.graded else {"points": it.points, "status": "pass"})
            for it in R.items
        },
        "environment": {"chromium": "1"},
    }
    report["items"][auto[1]] = {"points": None, "status": "untested", "evidence": {"reason": 'probe "x" not run\n'}}
    out = []
    for k in range(4):
        reviews = [
            Review("ann", graded[0], "grade", R.item(graded[0]).points * 0.75, 0.75, "好", created_at="2026-01-01"),
            Review("bob", graded[0], "grade", R.item(graded[0]).points * 0.25, 0.25, created_at="2026-01-02"),
            Review("ann", auto[0], "override", 0.5, reason="seen <b>wrong</b>", created_at="2026-01-03"),
        ][: k + 1]
        out.append(build_sheet(R, f"c-00000000000{k}", report, reviews, label="m.html" if k % 2 else None))
    return out


def test_should_write_the_sheet_as_json_dumps_of_its_dataclasses():
    sheets = _sheets()
    text = to_json(sheets, rank(sheets), reviews=[{"id": 1, "comment": "é"}])
    doc = json.loads(text)
    expected = []
    for s in sheets:
        d = {k: v for k, v in asdict(s).items() if k != "environment"}
        if s.label is None:
            d.pop("label")
        expected.append(d)
    assert doc["candidates"] == expected
    assert text == reference(doc)  # the layout too: json's own, byte for byte
