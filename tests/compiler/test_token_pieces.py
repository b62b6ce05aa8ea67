"""The token estimate's pieces: cut where the package's count tells each piece's word rule, by a
fast consuming pattern that cuts exactly where the zero-width split did."""

from __future__ import annotations

import json
import random
import re

import pytest

from memory_substrate import tokens as T

# The cut as a zero-width split: the definition the fast cut must agree with.
REFERENCE = re.compile(r'(?<=\n)|(?<=",)(?=")|(?<=\},)(?=\{)')
ALPHABET = ['"', ",", "}", "{", "\n", " ", "a", "Bcdefg", "1", "_", "  ", "é", "[", "]", ":", "\\"]


def _package(rng: random.Random) -> str:
    facts = [
        {
            "id": f"know:{rng.randrange(16**6):06x}",
            "type": "semantic",
            "kind": rng.choice(["fact", "decision"]),
            "status": "active",
            "text": " ".join(
                rng.choice(
                    [
                        "The",
                        "refund",
                        "key",
                        "is",
                        "derived",
                        "from",
                        "charge",
                        "id",
                        "Stripe",
                        "retries",
                        "webhooks",
                        "v2",
                        "it's",
                    ]
                )
                for _ in range(rng.randint(3, 30))
            ),
        }
        for _ in range(rng.randint(0, 8))
    ]
    turns = [f"{i} ann: " + "x" * rng.randint(1, 40) for i in range(rng.randint(0, 5))]
    return json.dumps(
        {"memory_context": {"task_class": "chat", "knowledge": facts, "episodes": ['## src:1 "t"', *turns]}},
        ensure_ascii=False,
        separators=(",", ":"),
    )


@pytest.mark.parametrize("seed", range(5))
def test_the_fast_cut_cuts_where_the_zero_width_split_does(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(400):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 60)))
        assert T._pieces(text) == REFERENCE.split(text), repr(text)
    for _ in range(50):
        text = _package(rng)
        assert T._pieces(text) == REFERENCE.split(text)
