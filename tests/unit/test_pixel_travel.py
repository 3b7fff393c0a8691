"""travel_stats, the half of the autoplay rule that tells a sparse scene's one mover from a
spinner: drawn scenes whose truth is known by construction (frames every 0.5 s to 3 s)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.probes._pixel_compare import changed_mask, travel_stats

H, W = 360, 640
TIMES = np.arange(0.0, 3.01, 0.5)
CAR = (14, 8)  # px, a small 2D car
LINK_PX = load_scenario(None).probe_settings("playback").travel_link_px  # as the probe reads it


def car(speed_px_s: float, x0: int = 0, y: int = 100, enters_s: float = 1.5):
    def draw(im, t):
        if t >= enters_s:
            x = x0 + int(speed_px_s * (t - enters_s))
            cv2.rectangle(im, (x, y), (x + CAR[0], y + CAR[1]), (0, 200, 255), -1)

    return draw


def spinner(im, t):
    cv2.ellipse(im, (320, 180), (18, 18), float(np.degrees(t * 6)), 0, 260, (255, 255, 255), 5)


def counter(im, t):
    cv2.putText(im, f"{t * 123.4:08.2f}", (20, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (255, 255, 255), 2)


def caret(im, t):
    if int(t * 2) % 2:
        cv2.rectangle(im, (500, 300), (502, 318), (255, 255, 255), -1)


def travel(*parts) -> dict:
    frames = []
    for t in TIMES:
        im = np.full((H, W, 3), 30, np.uint8)
        for p in parts:
            p(im, t)
        frames.append(im)
    return travel_stats([changed_mask(a, b) for a, b in zip(frames, frames[1:])], LINK_PX)


@pytest.mark.parametrize("speed", [30, 80, 200])
def test_a_car_entering_at_1_5_s_travels_as_far_as_it_drove(speed):
    # seen at 1.5, 2.0, 2.5 and 3.0 s: the way from its second position to its last
    got = travel(car(speed))["travel_px"]
    assert abs(got - speed * 1.0) <= 3, got


@pytest.mark.parametrize(
    "parts", [[spinner], [counter], [caret], [spinner, counter, caret]], ids=["spinner", "counter", "caret", "all"]
)
def test_what_changes_in_place_does_not_travel(parts):
    assert travel(*parts)["travel_px"] <= 4


def test_a_car_beside_a_spinner_is_still_seen_to_travel():
    got = travel(spinner, car(80, x0=300, y=250))
    assert abs(got["travel_px"] - 80) <= 3 and got["bbox"][1] >= 240, got


def test_nothing_changed_is_no_travel_and_no_place():
    assert travel() == {"travel_px": 0, "extent_px": 0, "places": 0, "bbox": None}
