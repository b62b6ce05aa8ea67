"""The scan itself (redaction.py): every shape replaced by its typed marker with the rest of the
text kept, look-alikes left alone, <private> spans hidden, values walked, and time linear in the
input on adversarial text."""

from __future__ import annotations

import random
import re
import time
import uuid

import pytest

from memory_substrate.redaction import Redactions, kinds, marker, redact_text, redact_value, scan
from tests.security.shapes import Shape, capture_shapes, conversation_shapes


def _all_shapes() -> list[Shape]:
    rnd = random.Random(7)
    return conversation_shapes(rnd) + capture_shapes(rnd)


@pytest.mark.parametrize("shape", _all_shapes(), ids=lambda s: s.name)
def test_each_shape_becomes_its_marker_and_the_rest_is_kept(shape) -> None:  # type: ignore[no-untyped-def]
    found = Redactions()
    out = redact_text(shape.text, found)
    assert shape.secret not in out
    assert marker(shape.kind) in out, out
    assert found.kinds[shape.kind] >= 1 and shape.kind in kinds()
    # the words around the secret are kept (the ones a key block or a token is not made of)
    around = re.sub(r"(?s)-----BEGIN.*-----END[^\n]*", " ", shape.text.replace(shape.secret, " "))
    words = [w for w in around.split() if len(w) < 24 and "eyJ" not in w]
    assert all(w in out for w in words), (words, out)
    assert redact_text(out) is out  # a marker is never taken for a secret again


@pytest.mark.parametrize(
    "text",
    [
        "task-1234567890abcdefghijklmnop",
        "class='sk-button-primary-large-component'",
        "kebab-case-identifier-with-many-parts and code_name_foo and mst_edges_sorted_by_weight_ascending",
        "AKIA-not-a-key and ghp_short and xoxb-short and AIza-short",
        "token: str  # a type annotation",
        "password = get_password()",
        "secret = os.environ['APP_SECRET']",
        "api_key=${OPENAI_API_KEY} key=<your-key> TOKEN=xxx PASS=**** password: ********",
        "OPENAI_API_KEY=your-api-key-here and sk-xxxxxxxxxxxxxxxxxxxxxxxx",
        "max_tokens=100 tokenizer=bert token_count=12",
        "The password is stored in the vault; the password is required; passwords are rotated.",
        "The bearer of this letter is trusted. Authorization: required",
        "ssh://git@github.com:22/org/repo and http://localhost:8080/a@b and git@github.com:org/repo",
        "pwd: /home/user/projects",
        "see [REDACTED:openai_key] above",
    ],
)
def test_look_alikes_are_left_alone(text: str) -> None:
    found = Redactions()
    assert redact_text(text, found) is text and not found, found.kinds


def test_private_spans_are_never_kept() -> None:
    found = Redactions()
    text = "keep A <private>hide\nthis</private> keep B <PRIVATE>x<private>nested</private>y</Private> keep C"
    assert redact_text(text, found) == "keep A [REDACTED:private] keep B [REDACTED:private] keep C"
    assert found.kinds == {"private": 2}
    assert redact_text("before <private>an unclosed span\nruns to the end") == "before [REDACTED:private]"
    assert redact_text("a stray </private> closing tag stays") == "a stray </private> closing tag stays"


def test_a_file_keeps_its_lines() -> None:
    lines: list[tuple[str, int]] = []
    text = "one\n<private>two\nthree</private>\nfour password=hunter22x\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\nlast"
    out = scan(text, lambda kind, line: lines.append((kind, line)), keep_lines=True)
    assert out.split("\n") == [
        "one",
        "[REDACTED:private]",
        "",
        "four password=[REDACTED:secret_assignment]",
        "[REDACTED:private_key]",
        "",
        "",
        "last",
    ]
    assert sorted(lines) == [("private", 2), ("private_key", 5), ("secret_assignment", 4)]
    # without keep_lines a key's body lines go
    assert redact_text(
        "a\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\nb"
    ) == ("a\n[REDACTED:private_key]\nb")


def test_values_are_walked_and_unchanged_parts_kept_as_they_were() -> None:
    key = "sk-proj-" + uuid.uuid4().hex + "Zz9"
    clean = {"nested": [1, 2.5, None, True, "plain"]}
    doc = {
        "a": "x",
        "clean": clean,
        "b": {"password": f"DB_PASSWORD=hunter{uuid.uuid4().hex[:6]}1"},
        "c": (1, key),
        f"key {key}": "v",
    }
    found = Redactions()
    out = redact_value(doc, found)
    assert out["clean"] is clean and out["a"] == "x"
    assert out["c"] == (1, "[REDACTED:openai_key]") and "key [REDACTED:openai_key]" in out
    assert found.summary() == {"count": 3, "kinds": {"openai_key": 2, "secret_assignment": 1}}
    untouched = {"a": ["b", {"c": "d"}]}
    assert redact_value(untouched) is untouched
    assert Redactions().report({"x": 1}) == {"x": 1}
    assert found.report({"x": 1}) == {"x": 1, "redacted": found.summary()}


ADVERSARIAL = {
    "sk": "sk-",
    "sk_run": "sk-a",
    "password_words": "password ",
    "password_is": "password is '",
    "password_for": "password for a b c d ",
    "assignments": "DB_PASSWORD=",
    "quotes": 'password="',
    "schemes": "a://b:",
    "at": "a://b:c@",
    "bearer": "Bearer ",
    "authorization": "authorization: ",
    "jwt": "eyJaaaaa.",
    "private": "<private>",
    "closing": "</private>",
    "pem": "-----BEGIN PRIVATE KEY-----\n",
    "direct": "password a1a1a1a1 ",
    "words": "ab ",
    "env": "_KEY=",
    "mst": "mst_A",
}


def _seconds(text: str) -> float:
    t0 = time.perf_counter()
    redact_text(text)
    return time.perf_counter() - t0


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_time_grows_linearly_with_the_input(name: str) -> None:
    """1 MB and 4 MB of the same adversarial unit: four times the input takes about four times as
    long (a quadratic pattern would take sixteen), and 4 MB stays within seconds. A busy machine
    only adds time, so a pair that fails is timed again (at most three times) and judged by its
    fastest runs."""
    unit = ADVERSARIAL[name]
    small, large = ((unit * (n // len(unit) + 1))[:n] for n in (1_000_000, 4_000_000))
    t_small, t_large = _seconds(small), _seconds(large)
    for _ in range(2):
        if t_large < 8 * max(t_small, 0.01) and t_large < 10.0:
            break
        t_small, t_large = min(t_small, _seconds(small)), min(t_large, _seconds(large))
    assert t_large < 10.0, (name, t_small, t_large)
    assert t_large < 8 * max(t_small, 0.01), (name, t_small, t_large)
