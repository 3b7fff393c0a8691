"""The `shops` probe (items shops.hover, shops.auto_display, shops.manual_priority,
shops.card_placement, shops.touch) and what it is built from:

  probe.py        the probe itself: its collection settings and the four phases in order
  page.py         one fake-clock page of the probe: the DOM card reader, the hook's shop list,
                  where to point, evidence crops
  dom_cards.py    reading shop cards from the DOM (the in-page script, name attribution)
  pixels.py       pixel figures: WCAG contrast, contrast on a screenshot, changed regions
                  across a hover (a card drawn on a canvas), the patch tracked under a
                  following pointer, evidence crops
  follow.py       a pointer that follows a moving shop, step by step
  hover_touch.py  hover and touch, shop by shop
  auto_manual.py  the automatic display, and manual priority during it

The probe collects raw figures only; scorers/shops.py judges them (thresholds in the
scenario file's `scorers: shops:` section).
"""

from skycity_bench.probes.shops import shops_probe as probe  # noqa: F401  (registers the probe named "shops")
