"""Generate a reference-MCP-memory JSON Lines file of a given size (realistic, varied vocabulary).

Used by bench/import_bench.py and the large-file importer test. Deterministic for a seed.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ter",
    "on",
    "ra",
    "ve",
    "dis",
    "pa",
    "tro",
    "nel",
    "qui",
    "sa",
    "bor",
    "den",
    "fi",
    "gu",
    "han",
    "ix",
    "jo",
    "lum",
    "mar",
    "nor",
    "os",
    "pre",
    "rin",
    "sul",
    "tav",
    "ur",
    "wen",
    "yel",
    "zor",
]
TYPES = ["person", "company", "project", "tool", "service", "location", "concept", "event"]
RELATIONS = ["works_at", "knows", "uses", "part_of", "depends on", "manages", "created"]


def vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    words = set()
    while len(words) < size:
        words.add("".join(rng.choices(SYLLABLES, k=rng.randint(2, 4))))
    return sorted(words)


def generate(
    path: Path, target_bytes: int, seed: int = 7, words: tuple[int, int] = (8, 24)
) -> dict[str, int]:
    """Write entities (2-6 observations of ``words`` words each) and relations until ``target_bytes``."""
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    weights = [1.0 / (i + 1) for i in range(len(vocab))]  # Zipf-like word frequencies
    n = relations = size = 0
    names: list[str] = []
    with path.open("w", encoding="utf-8") as f:
        while size < target_bytes:
            obs = [
                " ".join(rng.choices(vocab, weights, k=rng.randint(*words))).capitalize() + "."
                for _ in range(rng.randint(2, 6))
            ]
            names.append(f"{rng.choice(vocab).title()} {n:07d}")
            line = (
                json.dumps(
                    {
                        "type": "entity",
                        "name": names[-1],
                        "entityType": rng.choice(TYPES),
                        "observations": obs,
                    }
                )
                + "\n"
            )
            f.write(line)
            size += len(line.encode())
            n += 1
            if n > 1 and rng.random() < 0.8:
                a, b = n - 1, rng.randrange(n - 1)
                line = (
                    json.dumps(
                        {
                            "type": "relation",
                            "from": names[a],
                            "to": names[b],
                            "relationType": rng.choice(RELATIONS),
                        }
                    )
                    + "\n"
                )
                f.write(line)
                size += len(line.encode())
                relations += 1
    return {"entities": n, "relations": relations, "bytes": size}


if __name__ == "__main__":
    print(generate(Path(sys.argv[1]), int(sys.argv[2])))
