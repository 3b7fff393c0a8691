"""Load and check a rubric file from rubrics/ (the rubric is data: review-principles.md).
Scoring code reads every point value and threshold from here."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import UserError

RUBRICS_DIR = Path(__file__).resolve().parent.parent / "rubrics"
DEFAULT_RUBRIC = RUBRICS_DIR / "skycity-v1.yaml"


class RubricItem(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    points: float = Field(gt=0)
    how: Literal["auto", "assisted", "manual"]
    dimension: str
    text: str

    def get(self, key: str, default: Any = None) -> Any:
        return (self.model_extra or {}).get(key, default)


class Rubric(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    title: str = ""
    total: float
    items: list[RubricItem]
    objective_partial_share: float = 0.5

    @model_validator(mode="after")
    def _sums(self) -> "Rubric":
        s = sum(i.points for i in self.items)
        if abs(s - self.total) > 1e-9:
            raise ValueError(f"items add up to {s:g}, not the total {self.total:g}")
        ids = [i.id for i in self.items]
        if len(set(ids)) != len(ids):
            raise ValueError("duplicate item ids")
        return self

    def item(self, item_id: str) -> RubricItem:
        for i in self.items:
            if i.id == item_id:
                return i
        raise KeyError(item_id)

    @property
    def ids(self) -> list[str]:
        return [i.id for i in self.items]


_cache: dict[str, tuple[Rubric, str]] = {}


def load_rubric(path: Path | str | None = None) -> Rubric:
    path = Path(path) if path else DEFAULT_RUBRIC
    key = str(path.resolve())
    if key in _cache:
        return _cache[key][0]
    if not path.is_file():
        raise UserError(f"rubric file not found: {path}")
    text = path.read_text(encoding="utf-8")
    try:
        rub = Rubric.model_validate(yaml.safe_load(text))
    except ValidationError as e:
        first = e.errors()[0]
        raise UserError(f"{path}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    _cache[key] = (rub, hashlib.sha256(text.encode()).hexdigest())
    return rub


def rubric_sha256(path: Path | str | None = None) -> str:
    load_rubric(path)
    return _cache[str(Path(path or DEFAULT_RUBRIC).resolve())][1]


def find_rubric(rubric_id: str) -> Optional[Path]:
    for p in sorted(RUBRICS_DIR.glob("*.yaml")):
        try:
            if yaml.safe_load(p.read_text(encoding="utf-8")).get("id") == rubric_id:
                return p
        except Exception:
            continue
    return None
