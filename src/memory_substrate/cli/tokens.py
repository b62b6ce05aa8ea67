"""``token create|list|revoke|rotate``: bearer tokens of the HTTP transport and the inspector.

A token is printed once, when it is made (``create``, ``rotate``); the store keeps only its
sha256, and ``list`` names each token by the first characters of that hash (``token_id``).
Revoking deletes the row: the server looks every request's token up, so the next request with
it gets 401, whichever process serves it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Protocol, TypedDict, TypeVar

import click

from memory_substrate.cli.common import fail, settings_of
from memory_substrate.errors import MemorySubstrateError, NotFoundError, ValidationError
from memory_substrate.json_types import JsonObject

if TYPE_CHECKING:
    from memory_substrate.storage.base import Store

_DURATION = re.compile(r"^\s*(\d{1,6})\s*([smhdw])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
MIN_ID_CHARS = 6
# Ten years: longer is "never" in practice (omit --expires-in for that), and it keeps the date
# far from datetime's year-9999 overflow whatever the unit.
MAX_EXPIRY = timedelta(days=3650)

T = TypeVar("T")


class StoreRunner(Protocol):
    """``with_store``: ``job(store)`` on the configured store; an error is reported and gives None."""

    def __call__(self, ctx: click.Context, job: Callable[[Store], T], /) -> T | None: ...


class Revoked(TypedDict):
    revoked: int
    token_ids: list[str]


def expiry(expires_in: str | None) -> str | None:
    """``30d``, ``12h``, ``90m``... as an ISO timestamp from now (UTC); None for no expiry."""
    if expires_in is None:
        return None
    m = _DURATION.match(expires_in)
    if not m or int(m.group(1)) == 0:
        raise click.BadParameter(
            "use a positive number and a unit: s, m, h, d or w (e.g. 30d)", param_hint="--expires-in"
        )
    delta = timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})
    if delta > MAX_EXPIRY:
        raise click.BadParameter(
            f"at most {MAX_EXPIRY.days} days (e.g. 520w); omit it for a token that never expires",
            param_hint="--expires-in",
        )
    return (datetime.now(UTC) + delta).isoformat(timespec="microseconds")


def _match(store: Store, token_id: str) -> Mapping[str, object]:
    """The one token whose id starts with ``token_id``; NotFound/Validation otherwise."""
    wanted = token_id.strip().lower()
    if len(wanted) < MIN_ID_CHARS or not re.fullmatch(r"[0-9a-f]+", wanted):
        raise ValidationError(
            f"a token id is at least {MIN_ID_CHARS} hex characters, as `token list` shows it"
        )
    found = [t for t in store.list_tokens() if t["token_hash"].startswith(wanted)]
    if not found:
        raise NotFoundError(f"no token with id {token_id!r}", details={"token_id": token_id})
    if len(found) > 1:
        raise ValidationError(f"token id {token_id!r} names {len(found)} tokens; give more characters")
    return found[0]


def _public(row: Mapping[str, object], now: str) -> JsonObject:
    out = {k: v for k, v in row.items() if k != "token_hash"}
    expires_at = row["expires_at"]  # an ISO time, or None for a token that never expires
    out["expired"] = bool(expires_at) and isinstance(expires_at, str) and expires_at <= now
    return out


def _text(row: Mapping[str, object], key: str) -> str:
    """A token row's string field (token_hash, token_id, namespace, label)."""
    return str(row[key])


def with_store(ctx: click.Context, job: Callable[[Store], T]) -> T | None:
    """``job(store)`` on the configured store, closed after; an error is reported and gives None."""
    from memory_substrate.storage.factory import open_store

    try:
        store = open_store(settings_of(ctx))
        try:
            return job(store)
        finally:
            store.close()
    except MemorySubstrateError as exc:
        fail(exc)
        return None


@click.group()
def token() -> None:
    """Manage bearer tokens for the HTTP transport (each token is bound to one namespace)."""


def _create(token: click.Group, with_store: StoreRunner) -> None:
    """Add ``token create``; ``with_store(ctx, job)`` runs ``job(store)`` and reports its errors."""

    @token.command(name="create")
    @click.option("--namespace", "token_namespace", required=True, help="The namespace the token may use.")
    @click.option("--label", default="", help="A note to recognise the token by (who or what uses it).")
    @click.option(
        "--expires-in", default=None, help="Make the token expire after this long: 30d, 12h, 90m, 2w."
    )
    @click.pass_context
    def token_create(ctx: click.Context, token_namespace: str, label: str, expires_in: str | None) -> None:
        """Print a new random token; only its sha256 is stored, so keep the printed value (it is never shown again)."""
        from memory_substrate.validation import is_namespace, namespace_problem

        if not is_namespace(token_namespace):
            raise click.BadParameter(namespace_problem(token_namespace), param_hint="--namespace")
        from memory_substrate.mcp.http import create_token

        expires_at = expiry(expires_in)
        value = with_store(ctx, lambda store: create_token(store, token_namespace, label, expires_at))
        if value is not None:
            click.echo(value)


def _list(token: click.Group, with_store: StoreRunner) -> None:
    """Add ``token list``; ``with_store(ctx, job)`` runs ``job(store)`` and reports its errors."""

    @token.command(name="list")
    @click.option("--namespace", "token_namespace", default=None, help="Only the tokens of this namespace.")
    @click.pass_context
    def token_list(ctx: click.Context, token_namespace: str | None) -> None:
        """List tokens as JSON: token_id, namespace, label, created_at, expires_at, expired (never the token)."""
        from memory_substrate.util import now_iso

        rows = with_store(ctx, lambda store: store.list_tokens(token_namespace))
        if rows is not None:
            now = now_iso()
            click.echo(json.dumps([_public(r, now) for r in rows], indent=2, ensure_ascii=False))


def _revoke(token: click.Group, with_store: StoreRunner) -> None:
    """Add ``token revoke``; ``with_store(ctx, job)`` runs ``job(store)`` and reports its errors."""

    @token.command(name="revoke")
    @click.argument("token_ids", nargs=-1, required=True)
    @click.pass_context
    def token_revoke(ctx: click.Context, token_ids: tuple[str, ...]) -> None:
        """Revoke tokens by TOKEN_ID (from `token list`; a unique prefix of 6+ characters is enough).

        Takes effect on the next request: a running server does not cache tokens."""

        def job(store: Store) -> Revoked:
            rows = [_match(store, t) for t in token_ids]  # all resolve before any is deleted
            n = store.revoke_tokens([_text(r, "token_hash") for r in rows])
            return {"revoked": n, "token_ids": [_text(r, "token_id") for r in rows]}

        result = with_store(ctx, job)
        if result is not None:
            click.echo(json.dumps(result))


def _rotate(token: click.Group, with_store: StoreRunner) -> None:
    """Add ``token rotate``; ``with_store(ctx, job)`` runs ``job(store)`` and reports its errors."""

    @token.command(name="rotate")
    @click.argument("token_id")
    @click.option(
        "--expires-in", default=None, help="Expiry of the new token (default: the old token's expiry)."
    )
    @click.pass_context
    def token_rotate(ctx: click.Context, token_id: str, expires_in: str | None) -> None:
        """Replace TOKEN_ID by a new token of the same namespace, label and expiry; print the new token.

        The old token is refused from the next request on. Rotating does not extend a token's life:
        the new one expires when the old one would have, unless --expires-in says otherwise."""
        from memory_substrate.mcp.http import create_token

        expires_at = expiry(expires_in)

        def job(store: Store) -> str:
            from memory_substrate.util import now_iso

            old = _match(store, token_id)
            kept = old["expires_at"] if isinstance(old["expires_at"], str) else None  # None: never expires
            if expires_at is None and kept and kept <= now_iso():
                raise ValidationError(
                    f"token {token_id!r} expired at {kept}; give the new one --expires-in",
                    details={"expires_at": kept},
                )
            value = create_token(store, _text(old, "namespace"), _text(old, "label"), expires_at or kept)
            store.revoke_tokens([_text(old, "token_hash")])
            return value

        value = with_store(ctx, job)
        if value is not None:
            click.echo(value)


for _add in (_create, _list, _revoke, _rotate):
    _add(token, with_store)
