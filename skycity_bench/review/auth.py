"""Who is asking, and what each route lets them do.

How to use it in a route (every route MUST declare one rule; tests/e2e/test_review_roles.py
walks every route and fails on one without, and the app refuses such a route at run time):

    auth: Auth = ctx.auth                    # made by create_app (one per store; app.state.auth)

    @router.get("/api/thing")
    def thing(me: Principal = Depends(auth.reviewer)): ...    # any signed-in account
    @router.post("/api/admin/thing")
    def admin_thing(me: Principal = Depends(auth.admin)): ... # admins only (403 for a reviewer)
    @router.get("/about", dependencies=[Depends(auth.public)])
    def about(): ...                                          # anonymous too (sign-in pages only)

    `auth.principal_or_none` (anonymous → None) also marks a route public; use it only on
    pages that anonymous visitors may see. A route module's `build(ctx) -> APIRouter` takes
    the app's ReviewContext (review/context.py: store, auth, templates) and is listed in
    app.py's AREAS.

The rule of a route is the auth dependency it uses (`Auth.rule_of`): no separate table to
keep in step. Paths served outside FastAPI's routing (the static files mount, the OpenAPI
document) are declared with `auth.declare(path, rule)`.

What each rule does:
- anonymous on a `reviewer` or `admin` route: 401 (JSON, with WWW-Authenticate: Bearer) on
  /api/…, a redirect to the sign-in page elsewhere;
- a reviewer on an `admin` route: 403;
- with a session cookie, any unsafe method (POST, PUT, PATCH, DELETE) must carry the
  session's CSRF token (form field `csrf`, or header X-CSRF-Token): 403 otherwise. A bearer
  token needs none (a browser never sends it by itself).

Identity comes from, in this order: `Authorization: Bearer <API token>` (a personal token,
made on /me, stored hashed; store/accounts.py), else the session cookie `skycity_session`,
signed and time-stamped by itsdangerous with the store's secret, valid SESSION_MAX_AGE_S,
httponly, SameSite=Lax, Secure when the request came over https (behind a TLS reverse proxy
that sets X-Forwarded-Proto; uvicorn trusts it from the proxy's address). A cookie holds the
session's id (its row in the store's credentials, hashed: signing out revokes it on the
server) and a random CSRF nonce; the session and its account are read on every request, so
signing out, a disabled account or a changed role takes effect at once. An unknown, forged or expired
cookie is anonymous: it creates nothing.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Mount

from skycity_bench.store import accounts
from skycity_bench.store.review_store import ReviewStore

SESSION_COOKIE = "skycity_session"
SESSION_MAX_AGE_S = 7 * 24 * 3600  # a week of reviewing without a new link
INVITE_TTL_S = 7 * 24 * 3600  # an invitation waits a week for its reviewer
SIGNIN_TTL_S = 24 * 3600  # an admin's sign-in link (CLI), a day
API_TOKEN_TTL_S = 90 * 24 * 3600  # a personal API token, 90 days
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
RULES = ("public", "reviewer", "admin")
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
FLASH_COOKIE = "skycity_shown_once"
FLASH_MAX_AGE_S = 120  # a secret handed from a POST to the page it redirects to


@dataclass(frozen=True)
class Principal:
    """A signed-in account. `via`: 'session' (cookie) or 'token' (bearer)."""

    name: str
    role: str  # 'reviewer' | 'admin'
    id: int = 0
    via: str = "session"
    csrf: str = ""  # the session's CSRF token (empty for a bearer token)

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


class NotSignedIn(HTTPException):
    def __init__(self, detail: str = "sign in first (an invitation link from your admin, or an API token)"):
        super().__init__(401, detail)


class Forbidden(HTTPException):
    def __init__(self, detail: str):
        super().__init__(403, detail)


class NoRule(HTTPException):
    def __init__(self, path: str):
        super().__init__(403, f"{path}: this route declares no role rule (review/auth.py): refused")


_bearer = HTTPBearer(auto_error=False)


class Auth:
    """The app's authentication: made once per app (create_app) over its store."""

    def __init__(self, store: ReviewStore, *, session_max_age_s: int = SESSION_MAX_AGE_S):
        self.store = store
        self.max_age = session_max_age_s
        self.sessions = URLSafeTimedSerializer(accounts.secret_key(store), salt="skycity-review-session")
        self.flashes = URLSafeTimedSerializer(accounts.secret_key(store), salt="skycity-review-flash")
        self.declared: dict[str, str] = {}  # path prefix → rule, for routes outside FastAPI's routing
        self._rule_calls: dict[Callable, str] = {
            self.public: "public",
            self.principal_or_none: "public",
            self.reviewer: "reviewer",
            self.admin: "admin",
        }

    # --- sessions ----------------------------------------------------------------------------
    def new_session(self, account_id: int) -> tuple[str, str]:
        """A new session of the account: the signed cookie value (the session's id, kept
        hashed in the store, and a fresh CSRF nonce) and its CSRF token."""
        csrf = secrets.token_urlsafe(24)
        sid = accounts.open_session(self.store, int(account_id), ttl_s=self.max_age)
        return self.sessions.dumps({"s": sid, "c": csrf}), csrf

    def end_session(self, request: Request) -> None:
        """Sign out on the server: the session's row is revoked (a copied cookie dies too)."""
        data = self._payload(request.cookies.get(SESSION_COOKIE) or "")
        if data is not None:
            accounts.close_session(self.store, data[0])

    def set_session(self, response, request: Request, account_id: int) -> None:
        response.set_cookie(
            SESSION_COOKIE,
            self.new_session(account_id)[0],
            max_age=self.max_age,
            httponly=True,
            samesite="lax",
            secure=request.url.scheme == "https",
            path="/",
        )

    @staticmethod
    def clear_session(response) -> None:
        response.delete_cookie(SESSION_COOKIE, path="/")

    # --- a secret shown once after a POST (POST-redirect-GET) -----------------------------------
    def flash(self, response, request: Request, page: str, value: dict) -> None:
        """Hand `value` (a new invitation link, a new API token) to the page the POST redirects
        to: a signed cookie for that page only, httponly, FLASH_MAX_AGE_S, read once."""
        response.set_cookie(
            FLASH_COOKIE,
            self.flashes.dumps(value),
            max_age=FLASH_MAX_AGE_S,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path=page,
        )

    @staticmethod
    def clear_flash(response, page: str) -> None:
        """After the page showed it: a reload shows the secret no more."""
        response.delete_cookie(FLASH_COOKIE, path=page)

    def take_flash(self, request: Request) -> Optional[dict]:
        """The value a POST handed this page (None if none, stale or forged); the page clears
        it (clear_flash)."""
        raw = request.cookies.get(FLASH_COOKIE)
        if not raw:
            return None
        try:
            data = self.flashes.loads(raw, max_age=FLASH_MAX_AGE_S)
        except (BadSignature, TypeError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def _payload(self, raw: str) -> Optional[tuple[str, str]]:
        try:
            data = self.sessions.loads(raw, max_age=self.max_age)
            return str(data["s"]), str(data["c"])
        except (BadSignature, KeyError, TypeError, ValueError):
            return None

    def _from_cookie(self, raw: str) -> Optional[Principal]:
        data = self._payload(raw)
        if data is None:
            return None
        acc = accounts.session_account(self.store, data[0])
        if acc is None or acc["disabled_at"]:
            return None
        return Principal(acc["name"], acc["role"], acc["id"], "session", data[1])

    def _from_token(self, token: str) -> Optional[Principal]:
        acc = accounts.api_account(self.store, token)
        if acc is None or acc["disabled_at"]:
            return None
        return Principal(acc["name"], acc["role"], acc["id"], "token", "")

    # --- the dependencies (each one is also a rule: see rule_of) ----------------------------------
    async def principal_or_none(
        self, request: Request, creds: Optional[HTTPAuthorizationCredentials] = Depends(_bearer)
    ) -> Optional[Principal]:
        """The caller, or None (anonymous). A bearer token that is not valid is a 401 (a
        client that sends one expects it to count); a bad cookie is just anonymous. (The
        bearer scheme as a sub-dependency: the OpenAPI document declares it on every route.)"""
        if "principal" in request.state._state:
            return request.state.principal
        me = None
        if creds is not None:
            me = self._from_token(creds.credentials)
            if me is None:
                raise NotSignedIn("the bearer token is unknown, expired or revoked")
        else:
            raw = request.cookies.get(SESSION_COOKIE)
            me = self._from_cookie(raw) if raw else None
        request.state.principal = me
        return me

    async def public(self, request: Request, creds: Optional[HTTPAuthorizationCredentials] = Depends(_bearer)) -> None:
        """Anonymous allowed (the sign-in pages)."""
        await self.principal_or_none(request, creds)

    async def reviewer(
        self, request: Request, creds: Optional[HTTPAuthorizationCredentials] = Depends(_bearer)
    ) -> Principal:
        """Any signed-in account (reviewer or admin); CSRF checked on unsafe methods."""
        me = await self.principal_or_none(request, creds)
        if me is None:
            raise NotSignedIn()
        if request.method not in SAFE_METHODS and me.via == "session":
            await self._check_csrf(request, me)
        return me

    async def admin(
        self, request: Request, creds: Optional[HTTPAuthorizationCredentials] = Depends(_bearer)
    ) -> Principal:
        me = await self.reviewer(request, creds)
        if not me.is_admin:
            raise Forbidden("admins only")
        return me

    require_reviewer = reviewer
    require_admin = admin

    @staticmethod
    def require_session(me: Principal) -> None:
        """Only a signed-in browser session may make an API token: a token minting tokens
        would let a leaked one outlive its expiry and its revocation."""
        if me.via != "session":
            raise Forbidden(
                "API tokens are made from a signed-in browser session (the account page, /me), never by a token"
            )

    async def _check_csrf(self, request: Request, me: Principal) -> None:
        sent: object = request.headers.get(CSRF_HEADER)  # a header, or the form's field
        if sent is None and request.headers.get("content-type", "").split(";")[0].strip() in (
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ):
            sent = (await request.form()).get(CSRF_FIELD)  # starlette keeps the parsed form for the route
        if not sent or not secrets.compare_digest(str(sent), me.csrf):
            raise Forbidden("the form's CSRF token is missing or not this session's: reload the page and try again")

    # --- rules ----------------------------------------------------------------------------------
    def declare(self, path: str, rule: str) -> None:
        """The rule of a path served outside FastAPI's routing (a mount, the OpenAPI JSON)."""
        if rule not in RULES:
            raise ValueError(rule)
        self.declared[path] = rule

    def rule_of(self, route: BaseRoute) -> Optional[str]:
        """The role rule a route declares: the strictest auth dependency it uses, or the
        declared rule of its path; None when it has none."""
        dependant = getattr(route, "dependant", None)
        found: set[str] = set()
        if dependant is not None:
            stack = [dependant]
            while stack:
                d = stack.pop()
                for sub in d.dependencies:
                    if sub.call in self._rule_calls:
                        found.add(self._rule_calls[sub.call])
                    stack.append(sub)
        for r in ("admin", "reviewer", "public"):
            if r in found:
                return r
        path = getattr(route, "path", None)
        if path in self.declared:
            return self.declared[path]
        if isinstance(route, Mount) and route.path in self.declared:
            return self.declared[route.path]
        return None

    @staticmethod
    def iter_routes(app) -> list[tuple[str, BaseRoute]]:
        """(full path, route) for every route the app serves, routers included (newer
        FastAPI keeps an included router as one entry of app.routes; older ones copy its
        routes in): what the role test walks."""
        out: list[tuple[str, BaseRoute]] = []

        def walk(routes, prefix: str) -> None:
            for r in routes:
                inner = getattr(r, "original_router", None)
                if inner is not None:
                    ctx = getattr(r, "include_context", None)
                    walk(inner.routes, prefix + (getattr(ctx, "prefix", "") or ""))
                else:
                    out.append((prefix + getattr(r, "path", ""), r))

        walk(app.routes, "")
        return out

    async def gate(self, request: Request) -> None:
        """An app-wide dependency: a route without a rule answers 403 (fail closed)."""
        route = request.scope.get("route")
        if route is not None and self.rule_of(route) is None:
            raise NoRule(getattr(route, "path", request.url.path))

    def template_context(self, request: Request) -> dict:
        """For every page: `me` (the Principal or None) and `csrf` (the form token)."""
        me = getattr(request.state, "principal", None)
        return {"me": me, "csrf": me.csrf if me else ""}


__all__ = [
    "Auth",
    "Principal",
    "NotSignedIn",
    "Forbidden",
    "SESSION_COOKIE",
    "SESSION_MAX_AGE_S",
    "INVITE_TTL_S",
    "SIGNIN_TTL_S",
    "API_TOKEN_TTL_S",
    "CSRF_FIELD",
    "CSRF_HEADER",
]
