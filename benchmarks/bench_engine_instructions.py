"""Instructions the engine spends parsing and checking 2,000 corpus files, under callgrind.

Instruction counts do not vary from run to run as timings do, so they settle differences of a
few per cent that timings cannot. Three processes run under ``valgrind --tool=callgrind``
(``PYTHONHASHSEED=0``): one loads the files and the check workload, one also parses them, one also
checks each file's URLs once; the differences are the parse and the first pass of checks.

    python benchmarks/bench_engine_instructions.py [--tree PATH]

``--tree`` measures the ``scrapy_rerp`` of another checkout (``git worktree add`` one at the
commit to compare with). The corpus is read from ``$SCRAPY_RERP_CORPUS`` (default
``../shared/corpus``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

FILES = 2000


def _corpus() -> Path:
    default = Path(__file__).resolve().parents[2] / "shared" / "corpus"
    return Path(os.environ.get("SCRAPY_RERP_CORPUS", default))


def workload(mode: str) -> None:
    """What one measured process does: load, then parse, then check (by ``mode``)."""
    corpus = _corpus()
    names = sorted(path.name for path in (corpus / "robots").iterdir())
    step = len(names) / FILES
    chosen = [names[int(i * step)] for i in range(FILES)]  # evenly spaced, like the whole
    bodies = {name: (corpus / "robots" / name).read_bytes() for name in chosen}
    checks: dict[str, list[tuple[str, str]]] = {}
    with gzip.open(corpus / "urls.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record["file"] in bodies:
                checks.setdefault(record["file"], []).append((record["url"], record["agent"]))
    from scrapy_rerp.engine import parse

    if mode == "load":
        return
    parsed = {name: parse(body) for name, body in bodies.items()}
    if mode == "check":
        for name, robots in parsed.items():
            for url, agent in checks.get(name, ()):
                robots.allowed(url, agent)


def count(mode: str, tree: Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "callgrind.out")
        env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(tree)}
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--child",
                mode,
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        found = re.search(r"Collected : (\d+)", done.stderr)
        if found is None:
            raise SystemExit(f"no instruction count from callgrind:\n{done.stderr}")
        return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        workload(args.child)
        return
    load, parsed, checked = (count(mode, args.tree) for mode in ("load", "parse", "check"))
    print(f"scrapy_rerp from {args.tree}")
    print(f"parse {FILES:,} files: {(parsed - load) / 1e6:,.1f}M instructions")
    print(f"first pass of their checks: {(checked - parsed) / 1e6:,.1f}M instructions")


if __name__ == "__main__":
    main()
