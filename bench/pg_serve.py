"""Keep an embedded PostgreSQL (with pgvector) running for benchmarks that search a kept store.

    .venv/bin/python bench/pg_serve.py [--url-file FILE]

Prints the server's URL (and writes it to FILE), then serves until interrupted (Ctrl-C or
SIGTERM); the cluster lives in a temporary folder and is removed on exit. With it a large store
is built once and searched again by several trees: ``scale_bench.py --one SIZE --backend
postgres --database-url URL --keep DIR`` builds on the first call and searches the kept store on
the next ones.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.pg_server import running_postgres


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url-file", type=Path, default=None, help="also write the URL here")
    args = ap.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with running_postgres() as url:
        print(url, flush=True)
        if args.url_file:
            args.url_file.write_text(url)
        try:
            while not stop.wait(1.0):
                pass
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
