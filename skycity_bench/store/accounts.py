"""Accounts in the review store: reviewers and admins, their credentials
(invitation links, sign-in links, API tokens), the server's session secret, and the admin
actions that leave an audit row (invite, revoke, re-issue, finalise, un-finalise, unblind,
an admin's override). The audit table is append-only (the database refuses UPDATE and
DELETE on it, migration 0005); a row names the account it concerns (`subject`), whose owner
sees it on their account page.

No silent impersonation: a new sign-in link for an account that has signed in (an active
account) is refused; the admin revokes it first (its sessions and tokens die, which its
owner notices, and the audit trail tells them who did it and when), then re-issues a link.

Credentials (and the server side of each session: signing out ends it everywhere, not just
in the cookie) are stored as the sha256 of the secret, never the secret itself. The secret is
`secrets.token_urlsafe(32)`: 256 random bits. A fast hash is the right tool for such a
token (unlike a password, it cannot be guessed, so a slow salted hash such as argon2 adds no
strength), and an unsalted digest can be looked up by its unique index in one query; a
database dump alone signs no one in. One-time kinds (invite, signin) are marked used in the
same write transaction that redeems them, so a link works once even when clicked twice at
once.

The session secret (itsdangerous signs session cookies and CSRF tokens with it) is made once
and kept in the store's meta table, so every app process serving the same store (several
machines on one PostgreSQL, or a restart) accepts the same sessions. Whoever can read the
store can forge a session — they can read every score anyway. Rotating it
(`rotate_secret`) signs everyone out.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
from typing import Any, Optional

from sqlalchemy.engine import Connection, RowMapping

from skycity_bench.store.review_store import ReviewStore
from skycity_bench.store.sql import Record, _q, now
from skycity_bench.store.validate import InvalidReview, check_reviewer_name

ROLES = ("reviewer", "admin")
KINDS = ("invite", "signin", "api", "session")
ONE_TIME = ("invite", "signin")
SECRET_KEY = "session_secret"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _later(seconds: float) -> str:
    return (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)).isoformat(timespec="microseconds")


def secret_key(store: ReviewStore) -> str:
    """The store's session secret, made on first use (kept in meta; see the module doc)."""
    with store.db.read() as con:
        row = _q(con, "SELECT value FROM meta WHERE key = :k", k=SECRET_KEY).first()
    if row is not None:
        found: str = row["value"]
        return found
    with store.db.write() as con:  # writers queue: two first starts agree on one secret
        row = _q(con, "SELECT value FROM meta WHERE key = :k", k=SECRET_KEY).first()
        if row is not None:
            made: str = row["value"]  # by another process meanwhile
            return made
        value = secrets.token_urlsafe(48)
        _q(con, "INSERT INTO meta (key, value) VALUES (:k, :v)", k=SECRET_KEY, v=value)
        return value


def rotate_secret(store: ReviewStore) -> None:
    with store.db.write() as con:
        _q(con, "UPDATE meta SET value = :v WHERE key = :k", k=SECRET_KEY, v=secrets.token_urlsafe(48))


_COLS = "id, name, seat, role, disabled_at, created_at"


def account(store: ReviewStore, name: str) -> Optional[Record]:
    with store.db.read() as con:
        row = _q(con, f"SELECT {_COLS} FROM reviewers WHERE name = :n", n=name).first()
    return dict(row) if row else None


def account_by_id(store: ReviewStore, rid: int) -> Optional[Record]:
    with store.db.read() as con:
        row = _q(con, f"SELECT {_COLS} FROM reviewers WHERE id = :i", i=rid).first()
    return dict(row) if row else None


def accounts(store: ReviewStore) -> list[Record]:
    with store.db.read() as con:
        return [dict(r) for r in _q(con, f"SELECT {_COLS} FROM reviewers ORDER BY seat")]


def has_admin(store: ReviewStore) -> bool:
    with store.db.read() as con:
        return _q(con, "SELECT 1 FROM reviewers WHERE role = 'admin' AND disabled_at IS NULL").first() is not None


def create_account(store: ReviewStore, name: str, role: str = "reviewer", *, by: str = "operator") -> Record:
    """A new account (its seat: the next in creation order, which decides its queue order).
    An existing name is refused (InvalidReview 409), except that asking again for the same
    role returns the account as it is (re-inviting someone who lost their link)."""
    if role not in ROLES:
        raise InvalidReview(f"role must be one of {', '.join(ROLES)}, not {role!r}", 422)
    name = check_reviewer_name(name)
    with store.db.write() as con:
        row = _q(con, f"SELECT {_COLS} FROM reviewers WHERE name = :n", n=name).first()
        if row is not None:
            if row["role"] != role:
                raise InvalidReview(f"{name!r} is already an account with the role {row['role']}", 409)
            if row["disabled_at"]:
                raise InvalidReview(f"{name!r} is a disabled account", 409)
            return dict(row)
        seat = _q(con, "SELECT COALESCE(MAX(seat), -1) + 1 AS s FROM reviewers").scalar_one()
        rid = _q(
            con,
            "INSERT INTO reviewers (name, seat, created_at, role) VALUES (:n, :s, :t, :r) RETURNING id",
            n=name,
            s=seat,
            t=now(),
            r=role,
        ).scalar_one()
        _audit(con, by, "account", None, {"name": name, "role": role})
        created = dict(_q(con, f"SELECT {_COLS} FROM reviewers WHERE id = :i", i=rid).one())
    return created


def is_active(store: ReviewStore, rid: int) -> bool:
    """The account has signed in (a link used, or a session opened) and is not revoked:
    whoever holds a new link for it could act in its owner's name."""
    with store.db.read() as con:
        row = _q(
            con,
            "SELECT 1 FROM credentials c JOIN reviewers w ON w.id = c.reviewer_id WHERE c.reviewer_id = :r "
            "AND w.disabled_at IS NULL AND (c.used_at IS NOT NULL OR c.kind = 'session')",
            r=rid,
        ).first()
    return row is not None


def enable(store: ReviewStore, name: str, *, by: str) -> None:
    """A revoked account may sign in again (with a link re-issued to it)."""
    with store.db.write() as con:
        _q(con, "UPDATE reviewers SET disabled_at = NULL WHERE name = :n", n=name)


def disable(store: ReviewStore, name: str, *, by: str) -> None:
    """The account can no longer sign in (its sessions and tokens stop working at once); its
    reviews stay on the record."""
    with store.db.write() as con:
        row = _q(con, "SELECT id FROM reviewers WHERE name = :n", n=name).first()
        if row is None:
            raise InvalidReview(f"no such account: {name!r}", 404)
        _q(con, "UPDATE reviewers SET disabled_at = :t WHERE id = :i AND disabled_at IS NULL", t=now(), i=row["id"])
        _q(
            con,
            "UPDATE credentials SET revoked_at = :t WHERE reviewer_id = :i AND revoked_at IS NULL",
            t=now(),
            i=row["id"],
        )
        _audit(con, by, "revoke", None, {"name": name}, subject=name)


# --- credentials ---------------------------------------------------------------------------
def issue(store: ReviewStore, reviewer_id: int, kind: str, *, by: str, ttl_s: float) -> str:
    """A new secret of `kind` for the account; returns the secret (shown once, stored hashed).
    A new invite or sign-in link revokes that account's earlier unused ones."""
    if kind not in KINDS:
        raise ValueError(kind)
    token = secrets.token_urlsafe(32)
    with store.db.write() as con:
        if kind in ONE_TIME:
            _q(
                con,
                "UPDATE credentials SET revoked_at = :t WHERE reviewer_id = :r AND kind IN ('invite', 'signin') "
                "AND used_at IS NULL AND revoked_at IS NULL",
                t=now(),
                r=reviewer_id,
            )
        _q(
            con,
            "INSERT INTO credentials (reviewer_id, kind, token_hash, created_at, created_by, expires_at) "
            "VALUES (:r, :k, :h, :t, :b, :e)",
            r=reviewer_id,
            k=kind,
            h=token_hash(token),
            t=now(),
            b=by,
            e=_later(ttl_s),
        )
    return token


def _valid(con: Connection, token: str, kinds: tuple[str, ...]) -> Optional[RowMapping]:
    if not token or len(token) > 200:
        return None
    row = _q(
        con,
        "SELECT c.id, c.kind, c.reviewer_id, c.expires_at, c.used_at, c.revoked_at, w.disabled_at "
        "FROM credentials c JOIN reviewers w ON w.id = c.reviewer_id WHERE c.token_hash = :h",
        h=token_hash(token),
    ).first()
    if row is None or row["kind"] not in kinds or row["revoked_at"] or row["disabled_at"]:
        return None
    if row["expires_at"] and row["expires_at"] <= now():
        return None
    if row["kind"] in ONE_TIME and row["used_at"]:
        return None
    return row


def peek(store: ReviewStore, token: str, kinds: tuple[str, ...] = ONE_TIME) -> Optional[Record]:
    """The account a valid, unused link belongs to, without using it (the confirm page)."""
    with store.db.read() as con:
        row = _valid(con, token, kinds)
    return account_by_id(store, row["reviewer_id"]) if row else None


def redeem(store: ReviewStore, token: str, kinds: tuple[str, ...] = ONE_TIME) -> Optional[Record]:
    """The account of a valid credential; a one-time one is used up here (in the same write
    transaction). None for anything unknown, expired, used, revoked or disabled."""
    with store.db.write() as con:
        row = _valid(con, token, kinds)
        if row is None:
            return None
        if row["kind"] in ONE_TIME:
            _q(con, "UPDATE credentials SET used_at = :t WHERE id = :i", t=now(), i=row["id"])
        rid = row["reviewer_id"]
    return account_by_id(store, rid)


def _live_account(store: ReviewStore, secret: str, kind: str) -> Optional[Record]:
    """The account behind a live credential of this kind (read only: indexed queries)."""
    with store.db.read() as con:
        row = _valid(con, secret, (kind,))
        if row is None:
            return None
        acc = _q(con, f"SELECT {_COLS} FROM reviewers WHERE id = :i", i=row["reviewer_id"]).first()
    return dict(acc) if acc else None


def api_account(store: ReviewStore, token: str) -> Optional[Record]:
    """The account behind a bearer token."""
    return _live_account(store, token, "api")


def open_session(store: ReviewStore, reviewer_id: int, *, ttl_s: float) -> str:
    """A new session of the account (a browser signed in); returns its id, which the signed
    cookie carries. Kept as a credential row so signing out, or disabling the account, ends
    it on the server, not only in that browser."""
    return issue(store, reviewer_id, "session", by="sign-in", ttl_s=ttl_s)


def session_account(store: ReviewStore, session_id: str) -> Optional[Record]:
    """The account of a live session (not expired, not signed out, account not disabled)."""
    return _live_account(store, session_id, "session")


def close_session(store: ReviewStore, session_id: str) -> None:
    with store.db.write() as con:
        _q(
            con,
            "UPDATE credentials SET revoked_at = :t WHERE token_hash = :h AND kind = 'session' AND revoked_at IS NULL",
            t=now(),
            h=token_hash(session_id),
        )


def tokens(store: ReviewStore, reviewer_id: int) -> list[Record]:
    """The account's API tokens (never their secrets)."""
    with store.db.read() as con:
        return [
            dict(r)
            for r in _q(
                con,
                "SELECT id, created_at, expires_at, revoked_at FROM credentials "
                "WHERE reviewer_id = :r AND kind = 'api' ORDER BY id",
                r=reviewer_id,
            )
        ]


def revoke(store: ReviewStore, credential_id: int, reviewer_id: int) -> bool:
    with store.db.write() as con:
        n = _q(
            con,
            "UPDATE credentials SET revoked_at = :t WHERE id = :i AND reviewer_id = :r AND kind = 'api' "
            "AND revoked_at IS NULL",
            t=now(),
            i=credential_id,
            r=reviewer_id,
        ).result.rowcount
    return bool(n)


def invitations(store: ReviewStore) -> list[Record]:
    """Every invite / sign-in link ever made (state only), newest first."""
    with store.db.read() as con:
        return [
            dict(r)
            for r in _q(
                con,
                "SELECT c.id, w.name, c.kind, c.created_at, c.created_by, c.expires_at, "
                "c.used_at, c.revoked_at FROM credentials c JOIN reviewers w "
                "ON w.id = c.reviewer_id WHERE c.kind IN ('invite', 'signin') "
                "ORDER BY c.id DESC",
            )
        ]


# --- admin actions, with their audit rows ------------------------------------------------------
def _audit(
    con: Connection, actor: str, action: str, cid: Optional[str], detail: Any = "", subject: Optional[str] = None
) -> None:
    _q(
        con,
        "INSERT INTO audit (at, actor, action, candidate_id, detail, subject) VALUES (:t, :a, :x, :c, :d, :s)",
        t=now(),
        a=actor,
        x=action,
        c=cid,
        d=detail if isinstance(detail, str) else json.dumps(detail, ensure_ascii=False),
        s=subject,
    )


def audit(
    store: ReviewStore,
    actor: str,
    action: str,
    cid: Optional[str] = None,
    detail: Any = "",
    *,
    subject: Optional[str] = None,
) -> None:
    """One audit row; `subject`: the account the action concerns (its owner sees the row)."""
    with store.db.write() as con:
        _audit(con, actor, action, cid, detail, subject)


_AUDIT_COLS = "id, at, actor, action, candidate_id, detail, subject"


def audit_rows(store: ReviewStore, limit: int = 500) -> list[Record]:
    with store.db.read() as con:
        return [dict(r) for r in _q(con, f"SELECT {_AUDIT_COLS} FROM audit ORDER BY id DESC LIMIT :n", n=limit)]


def audit_for(store: ReviewStore, name: str, limit: int = 200) -> list[Record]:
    """The audit rows that concern one account, newest first: those naming it (invitation,
    revocation, re-issued link), the finalising of sheets it scored (its scores then stand,
    and others see them) and, once such a sheet is final, an admin's overrides on it (before
    that a reviewer sees no trace of anyone else's work)."""
    with store.db.read() as con:
        return [
            dict(r)
            for r in _q(
                con,
                f"SELECT {_AUDIT_COLS} FROM audit WHERE subject = :n OR (candidate_id IN (SELECT v.candidate_id "
                "FROM reviews v JOIN reviewers w ON w.id = v.reviewer_id WHERE w.name = :n) AND (action IN "
                "('finalize', 'unfinalize') OR (action = 'override' AND candidate_id IN "
                "(SELECT candidate_id FROM finalized)))) ORDER BY id DESC LIMIT :k",
                n=name,
                k=limit,
            )
        ]


def _known(store: ReviewStore, cid: str) -> None:
    from skycity_bench.store.validate import check_candidate_id

    check_candidate_id(cid)
    if not store.has_candidate(cid):
        raise InvalidReview(f"no such candidate: {cid}", 404)


def finalize(store: ReviewStore, cid: str, *, by: str, reason: str = "") -> bool:
    """Finalise a sheet (scores can no longer change; reviewers then see everyone's values).
    Returns False when it was already final (nothing written)."""
    _known(store, cid)
    with store.db.write() as con:
        if _q(con, "SELECT 1 FROM finalized WHERE candidate_id = :c", c=cid).first() is not None:
            return False
        _q(con, 'INSERT INTO finalized (candidate_id, at, "by") VALUES (:c, :t, :b)', c=cid, t=now(), b=by)
        _audit(con, by, "finalize", cid, reason)
    return True


def unfinalize(store: ReviewStore, cid: str, *, by: str, reason: str) -> bool:
    """Undo a finalisation (scores may change again; reviewers no longer see the others').
    The reason is required and kept in the audit row. False when it was not final."""
    _known(store, cid)
    if not reason.strip():
        raise InvalidReview("un-finalising needs a reason (kept in the audit trail)", 422)
    with store.db.write() as con:
        row = _q(con, 'SELECT at, "by" FROM finalized WHERE candidate_id = :c', c=cid).first()
        if row is None:
            return False
        _q(con, "DELETE FROM finalized WHERE candidate_id = :c", c=cid)
        _audit(
            con,
            by,
            "unfinalize",
            cid,
            {"reason": reason.strip(), "was_finalized_at": row["at"], "was_finalized_by": row["by"]},
        )
    return True


__all__ = [
    "ROLES",
    "KINDS",
    "token_hash",
    "secret_key",
    "rotate_secret",
    "account",
    "account_by_id",
    "accounts",
    "has_admin",
    "create_account",
    "is_active",
    "enable",
    "disable",
    "issue",
    "peek",
    "redeem",
    "api_account",
    "open_session",
    "session_account",
    "close_session",
    "tokens",
    "revoke",
    "invitations",
    "audit",
    "audit_rows",
    "audit_for",
    "finalize",
    "unfinalize",
]
