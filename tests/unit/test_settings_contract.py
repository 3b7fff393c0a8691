"""Settings and layering contracts: probe settings steer collection, scorer thresholds live
in the scenario's `scorers:` section, nothing falls back to a literal in code, and scorers/
stands apart from probes/ and browser/. No browser.

Cases not converted yet are strict=False xfails naming what is left, so the test does not
get weaker while the rest is done; each turns into a pass (XPASS) once converted.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from skycity_bench.common.errors import UserError
from skycity_bench.inputs.scenario import DEFAULT_SCENARIO, load_scenario
from skycity_bench.judging.scorers import all_scorer_settings
from skycity_bench.probes import registry

PKG = Path(__file__).resolve().parents[2] / "skycity_bench"
YAML = yaml.safe_load(DEFAULT_SCENARIO.read_text(encoding="utf-8"))

# What is left, by name: the lead removes an entry when its part is done.
LEFT_PROBE_DEFAULTS: dict[str, str] = {}
LEFT_SCORER_IMPORTS: dict[str, str] = {}
LEFT_SCORER_LITERALS = {}


def _cases(left: dict, names) -> list:
    return [
        pytest.param(n, marks=pytest.mark.xfail(strict=False, reason=f"left: {left[n]}")) if n in left else n
        for n in names
    ]


# ----------------------------------------------------------------- YAML <-> models
@pytest.mark.parametrize("name", _cases({}, registry.names()))
def test_every_probe_setting_in_the_yaml_is_a_field_and_every_field_is_in_the_yaml(name):
    fields = set(registry.get(name).settings.model_fields)
    keys = set(YAML["probes"].get(name) or {})
    assert keys - fields == set(), f"probes.{name}: in the YAML but read by nothing"
    assert fields - keys == set(), f"probes.{name}: read but not in the YAML"


@pytest.mark.parametrize("section", sorted(all_scorer_settings()))
def test_every_scorer_threshold_in_the_yaml_is_a_field_and_every_field_is_in_the_yaml(section):
    fields = set(all_scorer_settings()[section].model_fields)
    keys = set((YAML.get("scorers") or {}).get(section) or {})
    assert keys - fields == set(), f"scorers.{section}: in the YAML but read by nothing"
    assert fields - keys == set(), f"scorers.{section}: read but not in the YAML"


def test_every_scorer_section_in_the_yaml_has_its_model():
    assert set(YAML.get("scorers") or {}) <= set(all_scorer_settings())


def _code() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in PKG.rglob("*.py"))


@pytest.mark.parametrize("section", sorted(all_scorer_settings()))
def test_every_scorer_threshold_is_read_by_code(section):
    code = _code()
    unread = [f for f in all_scorer_settings()[section].model_fields if not re.search(rf"\.{f}\b", code)]
    assert unread == [], f"scorers.{section}: never read: {unread}"


@pytest.mark.parametrize("name", _cases({}, registry.names()))
def test_every_probe_setting_is_read_by_code(name):
    code = _code()
    unread = [f for f in registry.get(name).settings.model_fields if not re.search(rf"\.{f}\b", code)]
    assert unread == [], f"probes.{name}: never read: {unread}"


# ----------------------------------------------------------------- no fallbacks
@pytest.mark.parametrize("name", _cases(LEFT_PROBE_DEFAULTS, registry.names()))
def test_probe_settings_have_no_defaults(name):
    model = registry.get(name).settings
    with_default = [f for f, fi in model.model_fields.items() if not fi.is_required()]
    assert with_default == [], f"probes.{name}: defaults in code for {with_default}"


@pytest.mark.parametrize("section", sorted(all_scorer_settings()))
def test_scorer_settings_have_no_defaults(section):
    model = all_scorer_settings()[section]
    assert [f for f, fi in model.model_fields.items() if not fi.is_required()] == []


def test_a_missing_threshold_is_a_load_time_error(tmp_path):
    for section, model in all_scorer_settings().items():
        field = next(iter(model.model_fields))
        raw = yaml.safe_load(DEFAULT_SCENARIO.read_text(encoding="utf-8"))
        del raw["scorers"][section][field]
        p = tmp_path / f"{section}.yaml"
        p.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
        with pytest.raises(UserError, match=rf"scorers\.{section}: {field}: Field required"):
            load_scenario(p)


def test_a_missing_scorer_section_is_a_load_time_error(tmp_path):
    raw = yaml.safe_load(DEFAULT_SCENARIO.read_text(encoding="utf-8"))
    raw["scorers"].pop("framing")
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    with pytest.raises(UserError, match=r"scorers\.framing: max_blank_share: Field required"):
        load_scenario(p)


def test_an_unknown_scorer_section_or_threshold_is_refused(tmp_path):
    with pytest.raises(UserError, match=r"scorers\.nope: no such scorer settings section"):
        load_scenario(None, {"scorers": {"nope": {"x": 1}}})
    with pytest.raises(UserError, match=r"scorers\.framing: max_blank_sahre: Extra inputs"):
        load_scenario(None, {"scorers": {"framing": {"max_blank_sahre": 0.1}}})


def test_a_scorer_threshold_override_reaches_the_scorer():
    sc = load_scenario(None, {"scorers": {"framing": {"max_blank_share": 0.5}}})
    assert sc.scorer_settings("framing").max_blank_share == 0.5


# ----------------------------------------------------------------- layering
SCORERS = sorted(p.name for p in (PKG / "judging" / "scorers").glob("*.py"))


def _imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            mod = ("." * node.level) + (node.module or "")
            out += [mod] + [f"{mod}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return out


@pytest.mark.parametrize("name", _cases(LEFT_SCORER_IMPORTS, SCORERS))
def test_scorers_import_nothing_from_probes_or_browser(name):
    bad = [
        m
        for m in _imports(PKG / "judging" / "scorers" / name)
        if re.match(r"^(\.\.|skycity_bench\.)(probes|browser)\b", m)
    ]
    assert bad == [], f"scorers/{name} imports {bad}"


# Numbers that are not thresholds: identities, indices, unit factors, percent, and 2 (two
# points make the first interval).
_NEUTRAL = {0, 1, 2, -1, 100, 1000}


def _literals(path: Path) -> list[str]:
    """Numeric literals compared against, or given as a fallback default (x or N, get(k, N),
    getattr(o, k, N)): what a threshold or point value written in code looks like."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []

    def num(n):
        return (
            isinstance(n, ast.Constant)
            and isinstance(n.value, (int, float))
            and not isinstance(n.value, bool)
            and n.value not in _NEUTRAL
        )

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for c in [node.left, *node.comparators]:
                if num(c):
                    found.append(f"line {node.lineno}: compares with {c.value!r}")
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("get", "getattr")
            and len(node.args) >= 2
            and num(node.args[-1])
        ):
            found.append(f"line {node.lineno}: falls back to {node.args[-1].value!r}")
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and num(node.values[-1]):
            found.append(f"line {node.lineno}: falls back to {node.values[-1].value!r}")
    return found


@pytest.mark.parametrize("name", _cases(LEFT_SCORER_LITERALS, [n for n in SCORERS if n not in ("__init__.py",)]))
def test_no_threshold_or_point_value_is_a_literal_in_a_scorer(name):
    assert _literals(PKG / "judging" / "scorers" / name) == []
