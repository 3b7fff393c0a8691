"""`skycity-bench review`: serve the reviewers' web app (and its JSON API, /docs);
`skycity-bench review admin create NAME`: the store's admin and a one-time sign-in link.

Accounts: the operator creates the admin here; the admin invites reviewers from
the app's Team page (/team) or POST /api/admin/invitations. Serving beyond loopback with no
admin in the store is refused: nobody could sign in and run the team, and the operator has
most likely forgotten a step."""

from __future__ import annotations

from typing import Optional

import typer
from rich.console import Console

LOOPBACK = ("127.0.0.1", "localhost", "::1")
DEFAULT_PORT = 8765
DB_HELP = "review store: a file (default recordings/reviews.sqlite) or a postgresql:// URL"


def _url(host: str, port: int) -> str:
    h = host if host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    return f"http://{'[' + h + ']' if ':' in h else h}:{port}"


def _say_what_is_missing(store, c: Console, db: object, host: str) -> None:
    """No admin yet: refused beyond loopback (nobody could sign in), noted on loopback; plain
    http beyond loopback: noted (links and cookies cross the network in clear)."""
    from skycity_bench.common.errors import UserError
    from skycity_bench.store import accounts

    if not accounts.has_admin(store):
        create = f"skycity-bench review admin create --db {db} NAME"
        if host not in LOOPBACK:
            raise UserError(
                f"refusing to serve on {host}: the store {store.path} has no admin yet, so nobody "
                f"could sign in or invite reviewers; create one first: {create}"
            )
        c.print(
            f"[yellow]note:[/] the store has no admin yet: nobody can sign in until you run {create}",
            highlight=False,
            soft_wrap=True,
        )
    if host not in LOOPBACK:
        c.print(
            f"[yellow]note:[/] serving plain http on {host}: sign-in links and session cookies cross the "
            f"network in clear unless a TLS reverse proxy fronts the app (docs/review-app.md)",
            highlight=False,
            soft_wrap=True,
        )


def web_app(store, hosts: Optional[list[str]] = None):
    """The app exactly as `skycity-bench review` serves it (the tests serve this one): the
    review app and, on a PostgreSQL store, the multi-machine queue's progress beside it."""
    from skycity_bench.review import create_app

    web = create_app(store, hosts=hosts)
    if store.postgres:
        from skycity_bench.queue.progress_page import install

        install(web, store)
    return web


def review(
    ctx: typer.Context,
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    port: int = typer.Option(DEFAULT_PORT, "--port", min=0, max=65535, help="TCP port (0: any free one)"),
    host: str = typer.Option(
        "127.0.0.1",
        "--host",
        help="bind address (loopback unless told otherwise; beyond it the store must have an admin)",
    ),
    seed: Optional[int] = typer.Option(None, "--seed", help="queue-order seed of a NEW store (default random)"),
    allow_host: list[str] = typer.Option(
        [],
        "--allow-host",
        help="a Host name the app answers to besides loopback and --host "
        "(repeatable; e.g. the server's name on the team's network)",
    ),
    forwarded_allow_ips: str = typer.Option(
        "127.0.0.1",
        "--forwarded-allow-ips",
        help="addresses of the TLS reverse proxy whose X-Forwarded-Proto "
        "is trusted (session cookies get the Secure flag over https)",
    ),
) -> None:
    """Serve the blind review app: sign in by invitation, score candidates, override with reasons."""
    if ctx.invoked_subcommand is not None:
        return
    import uvicorn

    from skycity_bench.review.app import settle_before_serving
    from skycity_bench.review.guard import allowed_hosts
    from skycity_bench.store.review_store import DEFAULT_DB, ReviewStore

    store = ReviewStore(db or DEFAULT_DB, seed=seed)
    c = Console()
    _say_what_is_missing(store, c, db or DEFAULT_DB, host)
    c.print(
        f"review app on {_url(host, port)}/ (API at /docs) · store {store.path} · "
        f"{len(store.candidates())} candidates · rubric {store.rubric.id}",
        highlight=False,
    )
    hosts = allowed_hosts(host, allow_host)
    c.print(f"answering Host: {', '.join(hosts)} (others get 400)", highlight=False)
    web = web_app(store, hosts)
    if store.postgres:
        c.print(f"queue progress on {_url(host, port)}/progress (admins)", highlight=False)
    settle_before_serving(web)  # built once, kept out of the garbage collector's full walks
    uvicorn.run(
        web, host=host, port=port, log_level="warning", proxy_headers=True, forwarded_allow_ips=forwarded_allow_ips
    )


def admin_create(
    name: str = typer.Argument(..., help="the admin's name (shown in the audit trail)"),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    url: str = typer.Option(
        _url("127.0.0.1", DEFAULT_PORT),
        "--url",
        help="the address reviewers open (https://… behind a TLS proxy); the link starts with it",
    ),
) -> None:
    """Create the store's admin (or, for an existing admin, make a new link) and print a
    one-time sign-in link, valid 24 h. The link is shown once; the store keeps only its hash."""
    from skycity_bench.common.errors import UserError
    from skycity_bench.review.auth import SIGNIN_TTL_S
    from skycity_bench.store import accounts
    from skycity_bench.store.review_store import DEFAULT_DB, ReviewStore
    from skycity_bench.store.validate import InvalidReview

    store = ReviewStore(db or DEFAULT_DB)
    existing = accounts.account(store, name.strip())
    try:
        acc = accounts.create_account(store, name, "admin", by="operator (CLI)")
    except InvalidReview as e:
        raise UserError(f"admin create {name!r}: {e}") from None
    token = accounts.issue(store, acc["id"], "signin", by="operator (CLI)", ttl_s=SIGNIN_TTL_S)
    accounts.audit(store, "operator (CLI)", "admin sign-in link", None, {"name": acc["name"]})
    c = Console()
    c.print(
        f"{'admin ' + acc['name'] + ' exists: a new' if existing else 'admin ' + acc['name'] + ' created; a'} "
        f"one-time sign-in link (valid {SIGNIN_TTL_S // 3600} h; earlier unused links revoked):",
        highlight=False,
        soft_wrap=True,
    )
    print(f"{url.rstrip('/')}/signin/{token}")


def register(app: typer.Typer) -> None:
    review_app = typer.Typer(help="Serve the blind review app; manage its admin accounts.")
    app.add_typer(review_app, name="review")
    review_app.callback(invoke_without_command=True)(review)
    admin_app = typer.Typer(no_args_is_help=True, help="The store's admin accounts (the operator's side).")
    review_app.add_typer(admin_app, name="admin")
    admin_app.command("create")(admin_create)
