#!/usr/bin/env python3
"""Regenerate docs/screenshots/*.png: seed a demo store, serve the inspector, photograph each main
page in headless Chromium. Usage: .venv/bin/python scripts/inspector_screenshots.py"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory_substrate import Memory, Settings  # noqa: E402
from memory_substrate.inspector import build_inspector  # noqa: E402
from tests.inspect.browser import chromium, serving  # noqa: E402
from tests.inspect.seed import seed  # noqa: E402


def main() -> None:
    out = ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(Settings(root=Path(tmp), embedder="static"), namespace="payments")
        info = seed(mem)
        gateway = mem.query("entities", {"name": "Payments Gateway"}, {"max_facts": 0})["items"][0]["id"]
        pages = {
            "overview": "/ns/payments/",
            "search": "/ns/payments/search?q=roll+back+argo+deploy",
            "entity": f"/ns/payments/entity/{gateway}",
            "graph": f"/ns/payments/graph?id={gateway}&depth=2",
            "compile-trace": f"/ns/payments/trace/{info['trace']}",
            "procedures": "/ns/payments/procedures",
            "source": f"/ns/payments/source/{info['episodes'][0]}",
        }
        with serving(build_inspector(mem)) as base, chromium() as driver:
            for name, path in pages.items():
                driver.get(base + path)
                time.sleep(1.0 if name == "graph" else 0.2)
                driver.save_screenshot(str(out / f"{name}.png"))
                print(out / f"{name}.png")
        mem.close()


if __name__ == "__main__":
    main()
