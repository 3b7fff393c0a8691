"""Load and check a rubric file from rubrics/ (the rubric is data: review-principles.md).
Scoring code reads every point value and threshold from here.

Besides the items, a rubric carries the rubric's own wording (the ruler: Chinese, byte for
byte, English beside it), its rows (维度, with subtotals), the five levels of every subjective
item and the review rules (when a third reviewer is asked, how overrides are gridded).
`render_canonical` is the rubric rendered as canonical text; its SHA-256 (`Rubric.sha256`)
is pinned by tests/unit/test_rubric.py, so an edit in place fails loudly.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from skycity_bench.common.errors import UserError

RUBRICS_DIR = Path(__file__).resolve().parents[2] / "rubrics"
DEFAULT_RUBRIC = RUBRICS_DIR / "skycity-v1.yaml"


class RubricItem(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    points: float = Field(gt=0)
    how: Literal["auto", "assisted", "manual"]
    dimension: str
    text: str
    text_en: str = ""
    # the rubric's 常见失分点 that bear on this item (Chinese, byte for byte) and translations
    hints: list[str] = Field(default_factory=list)
    hints_en: list[str] = Field(default_factory=list)
    # lines of the rubric's 具体评分口径 that decide this item (Chinese, byte for byte)
    rules: list[str] = Field(default_factory=list)

    def get(self, key: str, default: Any = None) -> Any:
        extra = self.model_extra or {}
        if key in extra:
            return extra[key]
        return getattr(self, key, default) if key in type(self).model_fields else default

    def require(self, key: str) -> Any:
        """A value the item's scorer cannot judge without (full_at, per_shop ...): there is no
        fallback in code, so a rubric file that lacks it is an error naming item and key."""
        v = self.get(key)
        if v is None:
            raise ValueError(f"rubric item {self.id} has no `{key}`, which its scorer needs")
        return v

    @property
    def graded(self) -> bool:
        """Scored by reviewers on the five levels (manual and assisted items)."""
        return self.how in ("manual", "assisted")


class Level(BaseModel):
    """One of the five levels of a subjective item (人工评价): points = share × value."""

    key: str
    share: float = Field(ge=0, le=1)
    name: str
    name_en: str = ""
    text: str = Field(description="参考表现, byte for byte")
    text_en: str = ""

    @property
    def percent(self) -> int:
        return int(round(self.share * 100))


class Row(BaseModel):
    """One row of the rubric's 评分表 (a 维度) and the sheet items it groups."""

    id: str
    dimension: str
    dimension_en: str = ""
    points: float
    content: str = Field("", description="评分内容, byte for byte")
    content_en: str = ""
    method: str = ""
    method_en: str = ""
    cases: str = ""
    items: list[str]


class ReviewRules(BaseModel):
    third_reviewer_above_share: float = Field(0.25, ge=0, le=1)
    min_reviewers: int = Field(1, ge=1)
    override_step: float = Field(0.5, gt=0)
    override_reason_min_chars: int = Field(10, ge=1)


class Rubric(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    title: str = ""
    total: float
    items: list[RubricItem]
    objective_partial_share: float = 0.5
    title_en: str = ""
    rows: list[Row] = Field(default_factory=list)
    levels: list[Level] = Field(default_factory=list)
    levels_intro: str = ""
    levels_intro_en: str = ""
    review_notes: list[dict[str, str]] = Field(default_factory=list)
    review: ReviewRules = Field(default_factory=ReviewRules)
    # SHA-256 of the file this rubric was loaded from (report.md: rubric_sha256); set by
    # load_rubric, None for a rubric built in memory.
    _file_sha256: Optional[str] = PrivateAttr(None)

    @property
    def file_sha256(self) -> Optional[str]:
        return self._file_sha256

    @model_validator(mode="after")
    def _sums(self) -> Rubric:
        s = sum(i.points for i in self.items)
        if abs(s - self.total) > 1e-9:
            raise ValueError(f"items add up to {s:g}, not the total {self.total:g}")
        ids = [i.id for i in self.items]
        if len(set(ids)) != len(ids):
            raise ValueError("duplicate item ids")
        if self.rows:
            grouped = [i for r in self.rows for i in r.items]
            if sorted(grouped) != sorted(ids):
                raise ValueError("rows must group every item exactly once")
            for r in self.rows:
                rs = sum(self.item(i).points for i in r.items)
                if abs(rs - r.points) > 1e-9:
                    raise ValueError(f"row {r.id}: items add up to {rs:g}, not {r.points:g}")
                for i in r.items:
                    if self.item(i).dimension != r.dimension:
                        raise ValueError(f"item {i}: dimension differs from its row {r.id}")
        shares = [lv.share for lv in self.levels]
        if len(set(shares)) != len(shares) or len({lv.key for lv in self.levels}) != len(shares):
            raise ValueError("levels: duplicate share or key")
        return self

    def item(self, item_id: str) -> RubricItem:
        for i in self.items:
            if i.id == item_id:
                return i
        raise KeyError(item_id)

    @property
    def ids(self) -> list[str]:
        return [i.id for i in self.items]

    # --- rows, levels ----------------------------------------------------------------
    def row_groups(self) -> list[Row]:
        """The rows; a rubric file without `rows` is grouped by item dimension."""
        if self.rows:
            return list(self.rows)
        out: dict[str, Row] = {}
        for it in self.items:
            r = out.setdefault(it.dimension, Row(id=it.dimension, dimension=it.dimension, points=0, items=[]))
            r.items.append(it.id)
            r.points += it.points
        return list(out.values())

    def sorted_levels(self) -> list[Level]:
        return sorted(self.levels, key=lambda lv: -lv.share)

    def level(self, key_or_percent: Any) -> Level:
        """A level by key ("good"), Chinese name (良好) or percent (75). KeyError otherwise."""
        for lv in self.levels:
            if key_or_percent in (lv.key, lv.name):
                return lv
            if (
                isinstance(key_or_percent, (int, float))
                and not isinstance(key_or_percent, bool)
                and abs(float(key_or_percent) - lv.share * 100) < 1e-9
            ):
                return lv
        raise KeyError(key_or_percent)

    def level_for_points(self, item: RubricItem, points: float) -> Level:
        """The level whose share × value equals these points. KeyError when none does."""
        for lv in self.levels:
            if abs(lv.share * item.points - float(points)) < 1e-9:
                return lv
        raise KeyError(points)

    # --- rendering ---------------------------------------------------------------------
    @property
    def sha256(self) -> str:
        """SHA-256 of the canonical rendering: every value, threshold and word of the rubric."""
        return hashlib.sha256(render_canonical(self).encode("utf-8")).hexdigest()


def render_canonical(rubric: Rubric) -> str:
    """The rubric as canonical text (sorted-key JSON, UTF-8, no escapes). Comments and YAML
    layout do not change it; any wording, value or threshold does."""
    return json.dumps(rubric.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, indent=1) + "\n"


def render_markdown(rubric: Rubric, lang: str = "both") -> str:
    """The rubric as a Markdown table for people: rows, items, values, levels, hints.
    lang: "zh" (the ruler's wording only), "en", or "both" (Chinese with English beside it)."""

    def pick(zh: str, en: str) -> str:
        if lang == "zh" or not en:
            return zh
        if lang == "en":
            return en
        return f"{zh} / {en}"

    out = [
        f"# {pick(rubric.title, rubric.title_en)} ({rubric.id})",
        "",
        "| 维度 / row | 分值 | item | how | 评分内容 |",
        "| :--- | ---: | :--- | :--- | :--- |",
    ]
    for r in rubric.row_groups():
        out.append(
            f"| **{pick(r.dimension, r.dimension_en)}** | **{r.points:g}** | | {pick(r.method, r.method_en)} "
            f"| {pick(r.content, r.content_en)} |"
        )
        for iid in r.items:
            it = rubric.item(iid)
            out.append(f"| | {it.points:g} | `{it.id}` | {it.how} | {pick(it.text, it.text_en)} |")
    out.append(f"| **合计 / total** | **{rubric.total:g}** | | | |")
    if rubric.levels:
        out += [
            "",
            pick(rubric.levels_intro, rubric.levels_intro_en),
            "",
            "| 完成程度 | 得分比例 | 参考表现 |",
            "| :--- | ---: | :--- |",
        ]
        for lv in rubric.sorted_levels():
            out.append(f"| {pick(lv.name, lv.name_en)} | {lv.percent}% | {pick(lv.text, lv.text_en)} |")
    hinted = [it for it in rubric.items if it.hints]
    if hinted:
        out += ["", "## 常见失分点 / common deductions", ""]
        for it in hinted:
            for k, h in enumerate(it.hints):
                en = it.hints_en[k] if k < len(it.hints_en) else ""
                out.append(f"- `{it.id}`: {pick(h, en)}")
    return "\n".join(out) + "\n"


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
    rub._file_sha256 = _cache[key][1]
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
