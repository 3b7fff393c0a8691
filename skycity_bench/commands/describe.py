"""`skycity-bench describe`: what the bench can measure, read from its own registries (so
it cannot go stale): every probe with the evidence it writes and its settings, every scorer
with the sheet items it decides and the evidence it needs, every sheet item of the rubric
(the manual ones with their reviewers), and every setting with its default and where to
change it. Rich tables, or one JSON document with --json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
import yaml
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from skycity_bench.common.errors import UserError
from skycity_bench.inputs.rubric import DEFAULT_RUBRIC, Rubric, find_rubric, load_rubric
from skycity_bench.inputs.scenario import DEFAULT_SCENARIO, Scenario, load_scenario

_ROOT = DEFAULT_SCENARIO.parents[1]


def _shown(path: Path) -> str:
    """A path as a person types it: relative to the checkout when it lies inside."""
    try:
        return str(path.resolve().relative_to(_ROOT))
    except ValueError:
        return str(path)


def _first_line(text: Optional[str]) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0].strip() if lines else ""


def _module_doc(fn: Any) -> str:
    import sys

    mod = sys.modules.get(fn.__module__)
    return (mod.__doc__ if mod is not None else None) or ""


def _probes(sc: Scenario) -> list[dict[str, Any]]:
    """Every registered probe in run order: what it collects (its description, else its
    module's docstring), the evidence model and version it writes, its clock and settings."""
    from skycity_bench.probes import registry

    out = []
    for name in registry.names():
        spec = registry.get(name)
        ev = spec.evidence
        out.append(
            {
                "probe": name,
                "what": spec.description or _first_line(_module_doc(spec.collect)),
                "evidence": ev.__name__ if ev is not None else None,
                "evidence_version": spec.version,
                "clock": "real time" if spec.realtime else "fake clock",
                "runs_after": list(spec.after),
                "also_produces": list(spec.produces),
                "settings": [r["setting"] for r in _settings_rows(f"probes.{name}", sc.probe_settings(name))],
            }
        )
    return out


def _needs(spec: Any) -> list[str]:
    """The evidence a scorer reads: probe names with the versions it accepts."""
    return [f"{p} v{','.join(spec.accepts[p])}" if p in spec.accepts else p for p in spec.probes]


def _scorer_name(spec: Any) -> str:
    return f"{spec.fn.__module__.rsplit('.', 1)[-1]}.{spec.fn.__name__}"


def _scorers() -> list[dict[str, Any]]:
    """Every registered scorer function with the sheet items it decides and the evidence
    it needs (one function may decide several items)."""
    from skycity_bench.judging.scorers import all_scorers

    by_fn: dict[str, dict[str, Any]] = {}
    for item_id, spec in all_scorers().items():
        row = by_fn.setdefault(_scorer_name(spec), {"scorer": _scorer_name(spec), "items": [], "needs": []})
        row["items"].append(item_id)
        row["needs"] += [n for n in _needs(spec) if n not in row["needs"]]
    return list(by_fn.values())


def _rubric(rubric_id: Optional[str]) -> tuple[Rubric, Path]:
    path = find_rubric(rubric_id) if rubric_id else DEFAULT_RUBRIC
    if path is None:
        raise UserError(f"--rubric: no rubric with id {rubric_id!r} under rubrics/")
    return load_rubric(path), path


def _items(rubric: Rubric, rubric_path: Path) -> list[dict[str, Any]]:
    """Every sheet item of the rubric, decided by its scorer or, for items no scorer decides
    (the manual ones), by the reviewers; its points are changed in the rubric file."""
    from skycity_bench.judging.scorers import all_scorers

    scorers = all_scorers()
    out = []
    for item in rubric.items:
        spec = scorers.get(item.id)
        out.append(
            {
                "item": item.id,
                "points": item.points,
                "how": item.how,
                "decided_by": f"scorer {_scorer_name(spec)}" if spec is not None else "reviewers",
                "manual": spec is None,
                "needs": _needs(spec) if spec is not None else [],
                "text": item.text_en or item.text,
                "where": _shown(rubric_path),
            }
        )
    return out


def _settings_rows(where: str, model: BaseModel) -> list[dict[str, Any]]:
    """One row per field of a settings model (nested models as dotted paths)."""
    rows = []
    for field, info in type(model).model_fields.items():
        value = getattr(model, field)
        if isinstance(value, BaseModel):
            rows += _settings_rows(f"{where}.{field}", value)
            continue
        plain = isinstance(value, (int, float, str, bool, type(None)))
        rows.append(
            {
                "setting": f"{where}.{field}",
                "default": value if plain else json.dumps(value, default=str),
                "what": _first_line(info.description),
            }
        )
    return rows


def _in_file(raw: Any, dotted: str) -> bool:
    """Whether the scenario file itself sets this dotted path (else the model's default)."""
    for key in dotted.split("."):
        if not isinstance(raw, dict) or key not in raw:
            return False
        raw = raw[key]
    return True


def _settings(sc: Scenario, scenario_path: Path) -> list[dict[str, Any]]:
    """Every setting of the scenario, with its value there (its default) and where to change
    it: the dotted path in the scenario file (or a scenario of one's own, run --scenario)."""
    from skycity_bench.judging.scorers import all_scorer_settings
    from skycity_bench.probes import registry

    rows: list[dict[str, Any]] = []
    for section, info in type(sc).model_fields.items():
        value = getattr(sc, section)
        if section in ("probes", "scorers", "name") or value is None:
            continue
        if isinstance(value, BaseModel):
            rows += _settings_rows(section, value)
        else:
            rows.append({"setting": section, "default": json.dumps(value), "what": _first_line(info.description)})
    for name in registry.names():
        rows += _settings_rows(f"probes.{name}", sc.probe_settings(name))
    for section in sorted(all_scorer_settings()):
        rows += _settings_rows(f"scorers.{section}", sc.scorer_settings(section))
    raw = yaml.safe_load(scenario_path.read_text(encoding="utf-8")) or {}
    for r in rows:
        r["where"] = _shown(scenario_path)
        r["in_file"] = _in_file(raw, r["setting"])
    return rows


def describe(
    json_out: bool = typer.Option(False, "--json", help="one JSON document instead of tables"),
    rubric: Optional[str] = typer.Option(None, "--rubric", help="rubric id (default: the bundled one)"),
    scenario: Optional[Path] = typer.Option(None, "--scenario", help="scenario file (default scenarios/skycity.yaml)"),
) -> None:
    """List every probe, every scorer with the sheet items it decides and the evidence it
    needs, all sheet items (manual ones included), and every setting with its default and
    where to change it."""
    scenario_path = scenario or DEFAULT_SCENARIO
    sc = load_scenario(scenario_path, {})
    rb, rubric_path = _rubric(rubric)
    doc = {
        "scenario": _shown(scenario_path),
        "rubric": {"id": rb.id, "file": _shown(rubric_path)},
        "probes": _probes(sc),
        "scorers": _scorers(),
        "items": _items(rb, rubric_path),
        "settings": _settings(sc, scenario_path),
    }
    if json_out:
        typer.echo(json.dumps(doc, ensure_ascii=False, indent=1, default=str))
        return
    c = Console()
    for table in (_probe_table(doc), _scorer_table(doc), _item_table(doc), _settings_table(doc)):
        c.print(table)


def _probe_table(doc: dict[str, Any]) -> Table:
    t = Table(title="probes: what the bench collects")
    t.add_column("probe", no_wrap=True, min_width=max(len(p["probe"]) for p in doc["probes"]))
    for col in ("clock", "evidence", "settings", "what"):
        t.add_column(col)
    for p in doc["probes"]:
        n = len(p["settings"])
        settings = f"probes.{p['probe']}.* ({n})" if n else "-"
        t.add_row(p["probe"], p["clock"], f"{p['evidence']} v{p['evidence_version']}", settings, p["what"])
    return t


def _scorer_table(doc: dict[str, Any]) -> Table:
    t = Table(title="scorers: the items each decides, from what evidence")
    for col in ("scorer", "items", "needs"):
        t.add_column(col)
    for s in doc["scorers"]:
        t.add_row(s["scorer"], ", ".join(s["items"]), ", ".join(s["needs"]))
    return t


def _item_table(doc: dict[str, Any]) -> Table:
    rubric = doc["rubric"]
    t = Table(title=f"sheet items of {rubric['id']} (points in {rubric['file']}; a changed value is a new rubric)")
    t.add_column("item", no_wrap=True, min_width=max(len(i["item"]) for i in doc["items"]))
    for col in ("points", "how", "decided by", "needs"):
        t.add_column(col)
    for i in doc["items"]:
        decided = "reviewers (manual)" if i["manual"] else i["decided_by"]
        t.add_row(i["item"], f"{i['points']:g}", i["how"], decided, ", ".join(i["needs"]) or "-")
    return t


def _settings_table(doc: dict[str, Any]) -> Table:
    t = Table(title=f"settings: change them at their path in {doc['scenario']} (or a scenario of your own)")
    for col in ("setting", "default", "set in file", "what"):
        t.add_column(col, overflow="fold")
    for s in doc["settings"]:
        t.add_row(s["setting"], str(s["default"]), "yes" if s["in_file"] else "-", s["what"])
    return t


def register(app: typer.Typer) -> None:
    app.command("describe")(describe)
