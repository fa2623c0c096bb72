"""What the paired crawl benchmarks (bench_store, bench_evidence, bench_usage) share: a crawl
run in a child process of its own, its configuration through a file (with thousands of origins
it is too long for a command line) and its measurements back as one ``RESULT`` JSON line."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

RESULT = "RESULT "


def cpu_seconds() -> float:
    """This process's CPU time so far, user and system."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def send_result(result: dict[str, Any]) -> None:
    """The child's measurements, as the parent reads them."""
    print(RESULT + json.dumps(result, default=str), flush=True)


def run_child(script: str, config: dict[str, Any], what: str, timeout: float) -> dict[str, Any]:
    """Run ``script --child CONFIG_FILE`` in a fresh process; its result. A child that fails
    or outlives ``timeout`` seconds ends the benchmark, saying ``what`` it was."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="bench-") as file:
        json.dump(config, file)
        file.flush()
        command = [sys.executable, script, "--child", file.name]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise SystemExit(f"{what} did not end within {timeout:g} s") from None
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT)]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{what} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    if done.stderr.strip():
        sys.stderr.write(done.stderr)
    result: dict[str, Any] = json.loads(lines[-1][len(RESULT) :])
    return result


def shown_argv(argv: Sequence[str] | None) -> list[str]:
    """The command line a results file shows: the one given, without the smoke tests' own
    ``--results PATH``, so that a reader can run it."""
    shown = list(argv if argv is not None else sys.argv[1:])
    if "--results" in shown:
        at = shown.index("--results")
        del shown[at : at + 2]
    return shown
