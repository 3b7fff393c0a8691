"""The evidence image of one sample: frame A (time t) with every moving region outlined.

  green box            counted object (identifiable, present at t)
  cyan box, thin       identifiable motion at its t + Δ position only (the same object's
                       leading strip / new copy: supports claims, not counted twice)
  red box, thin + tag  excluded region, tagged P (tiny particle), S (thin streak),
                       C (large soft region: cloud, fog) or F (full-screen effect)
  yellow cross         hook claim that held (its own region moved)
  magenta cross        hook claim that did not hold (static, off screen, part/duplicate)
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

_TAG = {"tiny particle": "P", "thin streak (rain, particle trail, edge)": "S",
        "large soft region (cloud, fog, waterfall)": "C", "full-screen effect": "F"}


def _cross(img, x, y, color, s=5):
    x, y = int(round(x)), int(round(y))
    cv2.line(img, (x - s, y - s), (x + s, y + s), color, 2, cv2.LINE_AA)
    cv2.line(img, (x - s, y + s), (x + s, y - s), color, 2, cv2.LINE_AA)


def draw_evidence(path: Path, a: np.ndarray, data: dict, title: str) -> None:
    img = (a.astype(np.float32) * 0.75).astype(np.uint8)   # dim the frame so outlines read
    for r in data.get("regions", []):
        x, y, w, h = r["bbox"]
        if r["counted"]:
            cv2.rectangle(img, (x - 2, y - 2), (x + w + 1, y + h + 1), (60, 255, 60), 2)
        elif r["reason"] is None:
            cv2.rectangle(img, (x - 1, y - 1), (x + w, y + h), (255, 230, 0), 1)
        else:
            cv2.rectangle(img, (x - 1, y - 1), (x + w, y + h), (40, 40, 255), 1)
            cv2.putText(img, _TAG.get(r["reason"], "?"), (x, max(10, y - 3)), cv2.FONT_HERSHEY_SIMPLEX, 0.4,
                        (40, 40, 255), 1, cv2.LINE_AA)
    for c in data.get("claims") or []:
        if "x" not in c:
            continue
        _cross(img, c["x"], c["y"], (0, 230, 255) if c.get("verdict") == "moved" else (255, 0, 255))
    lines = [title,
             "green: counted  cyan: same mover at t+dt  red: excluded (P particle, S streak, C cloud/fog, F full screen)",
             "crosses: hook claims (yellow held, magenta did not)"]
    y = 22
    for i, text in enumerate(lines):
        scale = 0.6 if i == 0 else 0.45
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
        cv2.rectangle(img, (6, y - th - 6), (14 + tw, y + 6), (0, 0, 0), -1)
        cv2.putText(img, text, (10, y), cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), 1, cv2.LINE_AA)
        y += th + 14
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), img, [cv2.IMWRITE_PNG_COMPRESSION, 3])
