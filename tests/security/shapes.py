"""Secret shapes for the redaction tests: each a text as a person or an agent would write it, the
secret inside it (what must never be stored), and the kind its marker names. Every secret is made
afresh from random characters, so a test finds only what it wrote itself."""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

from memory_substrate.bearer import new_token

ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits


@dataclass(frozen=True)
class Shape:
    name: str
    kind: str
    text: str  # the sentence holding the secret
    secret: str  # the part that must not be stored

    @property
    def probes(self) -> list[str]:
        """What to look for in stored bytes: the secret, and its lowercase form (full-text indexes
        keep lowercase terms)."""
        return [self.secret, self.secret.lower()]


def _r(rnd: random.Random, n: int, alphabet: str = ALNUM) -> str:
    # A digit and letters of both cases in every one, as real keys have (and the scan asks of some).
    return "".join(rnd.choice(alphabet) for _ in range(n - 3)) + "a7Q"


def _b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def conversation_shapes(rnd: random.Random) -> list[Shape]:
    """The thirteen shapes a conversation kept verbatim before the one scan."""
    pem_body = [base64.b64encode(bytes(rnd.randrange(256) for _ in range(48))).decode() for _ in range(3)]
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(pem_body) + "\n-----END RSA PRIVATE KEY-----"
    jwt_sig = _r(rnd, 43, ALNUM + "-_")
    jwt = _b64url({"alg": "HS256", "typ": "JWT"}) + "." + _b64url({"sub": _r(rnd, 10)}) + "." + jwt_sig
    password = "hunter" + "".join(rnd.choice(string.digits) for _ in range(5)) + "x"
    db_password, pg_password = _r(rnd, 14), _r(rnd, 12)
    shapes = [
        ("openai", "openai_key", "sk-proj-" + _r(rnd, 48, ALNUM + "-_"), "the key is {s} for the bot"),
        ("anthropic", "anthropic_key", "sk-ant-api03-" + _r(rnd, 60, ALNUM + "-_"), "use {s} for Claude"),
        ("aws", "aws_access_key", "AKIA" + _r(rnd, 16, UPPER).upper(), "aws access key {s} in prod"),
        ("github", "github_token", "ghp_" + _r(rnd, 36), "push with {s} please"),
        ("db_password", "secret_assignment", db_password, "set DB_PASSWORD={s} in the env"),
        ("prose_password", "password", password, "the password is {s}, do not share it"),
        ("pem", "private_key", pem_body[0], "here is the deploy key:\n" + pem + "\nkeep it safe"),
        (
            "bearer_jwt",
            "jwt",
            jwt_sig,
            "curl -H 'Authorization: Bearer " + jwt + "' https://api.example.test",
        ),
        (
            "postgres_url",
            "connection_string_password",
            pg_password,
            "connect to postgres://admin:{s}@db.internal:5432/app tonight",
        ),
        ("stripe", "stripe_key", "sk_live_" + _r(rnd, 24), "billing uses {s} now"),
        ("mst", "memory_substrate_token", new_token(), "the memory server token is {s} today"),
        (
            "slack",
            "slack_token",
            "xoxb-" + "".join(rnd.choice(string.digits) for _ in range(11)) + "-" + _r(rnd, 24),
            "the slack bot has {s} as its token",
        ),
        ("google", "google_api_key", "AIza" + _r(rnd, 35, ALNUM + "-_"), "maps key {s} is restricted"),
    ]
    out = []
    for name, kind, secret, template in shapes:
        text = template.replace("{s}", secret)
        out.append(Shape(name, kind, text, secret))
    return out


def capture_shapes(rnd: random.Random) -> list[Shape]:
    """The seven shapes file capture kept before: this server's tokens, Authorization headers,
    passwords in connection strings (also as DATABASE_URL=), user:pass@ in URLs, Stripe and Google
    keys, and passwords in prose."""
    opaque, url_pw, env_pw, http_pw = _r(rnd, 32), _r(rnd, 12), _r(rnd, 12), _r(rnd, 10)
    prose = "Tr0ub4dor" + "".join(rnd.choice(string.digits) for _ in range(4))
    shapes = [
        ("mst", "memory_substrate_token", new_token(), "token: {s}"),
        ("authorization", "bearer_token", opaque, "Authorization: Bearer {s}"),
        (
            "connection_string",
            "connection_string_password",
            url_pw,
            "db = postgresql://app:{s}@10.0.3.17/app",
        ),
        (
            "database_url",
            "connection_string_password",
            env_pw,
            "DATABASE_URL=postgres://svc:{s}@db:5432/main",
        ),
        (
            "url_userinfo",
            "connection_string_password",
            http_pw,
            "mirror at https://deploy:{s}@files.example.test/x",
        ),
        ("stripe", "stripe_key", "sk_live_" + _r(rnd, 24), "STRIPE = {s}"),
        ("google", "google_api_key", "AIza" + _r(rnd, 35, ALNUM + "-_"), "maps: {s}"),
        ("prose_password", "password", prose, "The password for the staging db is {s} until Friday."),
    ]
    return [
        Shape(name, kind, template.replace("{s}", secret), secret) for name, kind, secret, template in shapes
    ]
