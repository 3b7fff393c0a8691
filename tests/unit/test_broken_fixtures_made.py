"""Three broken-page fixtures are made from one city (tests/fixtures/broken/make.py and
_broken_city.js): the checked-in pages are exactly what make.py writes, each one
self-contained file with the city inlined, so a change to the city reaches all three and a
hand edit to one page is caught here. No browser."""

from __future__ import annotations

import importlib.util
import re

import pytest

from tests.truth import FIXTURES

BROKEN = FIXTURES / "broken"


def _make():
    spec = importlib.util.spec_from_file_location("broken_make", BROKEN / "make.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


MAKE = _make()


@pytest.mark.parametrize("name", sorted(MAKE.FIXTURES))
def test_the_page_is_what_make_writes_from_the_shared_city(name):
    page = MAKE.page(MAKE.FIXTURES[name])
    assert (BROKEN / f"{name}.html").read_text(encoding="utf-8") == page, f"run {BROKEN / 'make.py'}"
    assert page == MAKE.page(MAKE.FIXTURES[name])  # the same bytes on every run


@pytest.mark.parametrize("name", sorted(MAKE.FIXTURES))
def test_the_page_is_one_self_contained_file_with_every_slot_filled(name):
    page = (BROKEN / f"{name}.html").read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]*\bsrc=|<link[^>]*\bhref=|import\s", page), "loads something from outside"
    assert "@slot" not in page and "@CITY@" not in page
    # the city's own code is in it (its movers, shops and hook)
    for line in ("const MOVERS = [];", "const SHOPS = [", "window.skyCityTest = {"):
        assert line in page


def test_every_slot_a_page_fills_is_in_the_city():
    city = (BROKEN / MAKE.CITY).read_text(encoding="utf-8")
    slots = set(re.findall(r"^// @slot (\w+)$", city, re.M))
    for name, spec in MAKE.FIXTURES.items():
        assert set(spec["slots"]) <= slots, name
    assert set(MAKE.WORKING) | {"ending"} == slots
