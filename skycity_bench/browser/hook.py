"""The client of window.skyCityTest (the hook a demo exposes; docs/spec/test-hook.md),
never trusting it: a missing, throwing, hanging or garbage-returning method gives
HookCall(ok=False, error=...). Used through DemoPage.hook (browser/session.py), which is
the page it calls into (`HookPage`: what the hook needs of a page)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Protocol

from skycity_bench.common.errors import Cause, DemoHang
from skycity_bench.inputs.scenario import Scenario


class HookPage(Protocol):
    """What the hook needs of a page: its scenario (the hook's names and call timeout) and a
    page script call under a timeout (DemoPage, browser/session.py)."""

    scenario: Scenario

    async def evaluate(
        self, expression: str, arg: Any = None, timeout: float = 5.0, what: str = "page script"
    ) -> Any: ...


@dataclass
class HookCall:
    ok: bool
    value: Any = None
    error: Optional[str] = None  # "missing", "threw: ...", "hung", "not JSON"
    hung: bool = False  # the call got no answer in time (the page's main thread hangs)

    @property
    def cause(self) -> Optional[Cause]:
        """Why a call gave no answer: a hang, or what the page's hook is (missing, threw,
        not JSON); None when it answered."""
        if self.ok:
            return None
        return Cause.HANG if self.hung else Cause.PAGE

    def to_json(self) -> dict:
        return {"ok": self.ok, "value": self.value, "error": self.error}


class Hook:
    """Calls into window.skyCityTest (names from the scenario), never trusting it: a missing,
    throwing, hanging or garbage-returning method gives HookCall(ok=False, error=...)."""

    _CALL = """async ([obj, method, args]) => {
      const h = window[obj];
      if (h === undefined || h === null) return {error: 'missing: no window.' + obj};
      if (method === null) {
        try { return {value: JSON.parse(JSON.stringify(Object.fromEntries(Object.entries(h).map(([k, v]) => [k, typeof v === 'function' ? 'function' : v]))))}; }
        catch (e) { return {error: 'not JSON: ' + e}; }
      }
      if (typeof h[method] !== 'function') return {error: 'missing: window.' + obj + '.' + method + ' is not a function'};
      let v;
      try { v = await h[method](...args); } catch (e) { return {error: 'threw: ' + (e && e.message || e)}; }
      try { return {value: v === undefined ? null : JSON.parse(JSON.stringify(v))}; }
      catch (e) { return {error: 'not JSON: ' + e}; }
    }"""

    def __init__(self, page: HookPage):
        self.dp = page

    def _names(self) -> tuple[str, dict[str, str]]:
        h = self.dp.scenario.hook
        return h.object, h.methods

    async def describe(self) -> HookCall:
        """The hook object's own properties (functions shown as 'function')."""
        obj, _ = self._names()
        return await self._call(obj, None, [])

    async def call(self, method: str, *args) -> HookCall:
        obj, names = self._names()
        return await self._call(obj, names.get(method, method), list(args))

    async def _call(self, obj: str, method: str | None, args: list) -> HookCall:
        try:
            r = await self.dp.evaluate(
                self._CALL,
                [obj, method, args],
                timeout=self.dp.scenario.hook.call_timeout_s,
                what=f"hook {method or obj}",
            )
        except DemoHang:
            return HookCall(
                False, error=f"hung: no answer within {self.dp.scenario.hook.call_timeout_s:g} s", hung=True
            )
        if not isinstance(r, dict):
            return HookCall(False, error="bad answer")
        if "error" in r:
            return HookCall(False, error=r["error"])
        return HookCall(True, value=r.get("value"))
