"""Write docs/modes.md, the per-mode input reference, from the models the services validate with.

python scripts/gen_modes_doc.py           # rewrite docs/modes.md
python scripts/gen_modes_doc.py --check   # exit 1 if docs/modes.md is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memory_substrate.modes_reference import collect, render, undescribed

DOC = Path(__file__).resolve().parents[1] / "docs" / "modes.md"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    entries = collect()
    text = render(entries)
    missing = undescribed(entries)
    if missing:
        print("modes without an input or options model: " + ", ".join(missing), file=sys.stderr)
    if args.check:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        if current != text:
            print(f"{DOC} is out of date: run python scripts/gen_modes_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC} ({len(entries)} modes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
