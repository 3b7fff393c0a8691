"""`skycity-bench describe`: what the bench can measure, read from its own registries (so
it cannot go stale): every probe with the evidence it writes, every sheet item with the
scorer that decides it (or the reviewers, for manual items) and the evidence it needs, and
every setting with its default and where to change it."""

from __future__ import annotations

import json
from typing import Any, Optional

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from skycity_bench.inputs.rubric import find_rubric, load_rubric
from skycity_bench.inputs.scenario import DEFAULT_SCENARIO, Scenario, load_scenario


def _first_line(text: Optional[str]) -> str:
    return (text or "").strip().splitlines()[0].strip() if (text or "").strip() else ""


def _probes() -> list[dict[str, Any]]:
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
            }
        )
    return out


def _module_doc(fn: Any) -> str:
    import sys

    mod = sys.modules.get(fn.__module__)
    return (mod.__doc__ if mod is not None else None) or ""


def _items(rubric_id: Optional[str]) -> list[dict[str, Any]]:
    from skycity_bench.judging.scorers import all_scorers

    rubric = load_rubric(find_rubric(rubric_id) if rubric_id else None)
    scorers = all_scorers()
    out = []
    for item in rubric.items:
        spec = scorers.get(item.id)
        needs = []
        if spec is not None:
            needs = [f"{p} v{','.join(spec.accepts[p])}" if p in spec.accepts else p for p in spec.probes]
        out.append(
            {
                "item": item.id,
                "points": item.points,
                "how": item.how,
                "decided_by": f"scorer {spec.fn.__module__.rsplit('.', 1)[-1]}.{spec.fn.__name__}"
                if spec is not None
                else "reviewers",
                "needs": needs,
                "text": item.text_en or item.text,
            }
        )
    return out


def _settings_rows(where: str, model: BaseModel) -> list[dict[str, Any]]:
    rows = []
    for field, info in type(model).model_fields.items():
        value = getattr(model, field)
        if isinstance(value, BaseModel):
            rows += _settings_rows(f"{where}.{field}", value)
            continue
        rows.append(
            {
                "setting": f"{where}.{field}",
                "default": value
                if isinstance(value, (int, float, str, bool, type(None)))
                else json.dumps(value, default=str),
                "what": _first_line(info.description),
            }
        )
    return rows


def _settings(sc: Scenario) -> list[dict[str, Any]]:
    """Every setting of the default scenario, with its value there (its default) and the
    dotted path to change it under (in scenarios/skycity.yaml or a scenario of one's own)."""
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
    return rows


def describe(
    json_out: bool = typer.Option(False, "--json", help="one JSON document instead of tables"),
    rubric: Optional[str] = typer.Option(None, "--rubric", help="rubric id (default: the bundled one)"),
) -> None:
    """List every probe, the sheet items each scorer decides and the evidence it needs, and
    every setting with its default and where to change it."""
    sc = load_scenario(None, {})
    doc = {
        "scenario": str(DEFAULT_SCENARIO),
        "probes": _probes(),
        "items": _items(rubric),
        "settings": _settings(sc),
    }
    if json_out:
        typer.echo(json.dumps(doc, ensure_ascii=False, indent=1, default=str))
        return
    _print_tables(doc)


def _print_tables(doc: dict[str, Any]) -> None:
    c = Console()
    t = Table(title="probes: what the bench collects")
    t.add_column("probe", no_wrap=True, min_width=max(len(p["probe"]) for p in doc["probes"]))
    for col in ("clock", "evidence", "what"):
        t.add_column(col)
    for p in doc["probes"]:
        t.add_row(p["probe"], p["clock"], f"{p['evidence']} v{p['evidence_version']}", p["what"])
    c.print(t)
    t = Table(title="sheet items: who decides each, from what")
    t.add_column("item", no_wrap=True, min_width=max(len(i["item"]) for i in doc["items"]))
    for col in ("points", "how", "decided by", "needs"):
        t.add_column(col)
    for i in doc["items"]:
        t.add_row(i["item"], f"{i['points']:g}", i["how"], i["decided_by"], ", ".join(i["needs"]) or "-")
    c.print(t)
    t = Table(title=f"settings: change them in a scenario file (default {doc['scenario']})")
    for col in ("setting", "default", "what"):
        t.add_column(col, overflow="fold")
    for s in doc["settings"]:
        t.add_row(s["setting"], str(s["default"]), s["what"])
    c.print(t)


def register(app: typer.Typer) -> None:
    app.command("describe")(describe)
