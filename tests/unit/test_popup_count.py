"""DemoPage counts each popup window once (page "popup" and context "page" both report it),
however quickly the one before was closed and its object freed (the hostile popups fixture:
a suite run at load counted 8 of 9 when a freed popup's id came back for the next one)."""

from __future__ import annotations

import asyncio
import gc

from skycity_bench.browser.session import DemoPage, PageEvents


class _Popup:
    """Stands in for a Playwright Page: a url and an async close(); nothing else is used."""

    def __init__(self, n: int):
        self.url = f"about:blank#{n}"

    async def close(self) -> None:
        pass


def _page() -> DemoPage:
    dp = DemoPage.__new__(DemoPage)  # only what _on_popup reads
    dp.page, dp.events = object(), PageEvents()
    return dp


def test_should_count_every_popup_once_when_each_is_closed_and_freed_before_the_next():
    async def main() -> int:
        dp = _page()
        for n in range(9):
            p = _Popup(n)
            dp._on_popup(p)  # the page's "popup" event
            dp._on_popup(p)  # ... and the context's "page" event: the same window
            del p
            await asyncio.sleep(0)  # the close runs; the object is freed
            await asyncio.sleep(0)
            gc.collect()
        return len(dp.events.popups)

    assert asyncio.run(main()) == 9
