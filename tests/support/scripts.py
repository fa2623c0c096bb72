"""Loading the benchmark scripts (files under ``benchmarks/``, not a package) as modules, and
running their children."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_script(name: str) -> ModuleType:
    """The module of ``benchmarks/<name>.py``, imported under *name*."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def script_output(name: str, *args: str) -> Any:
    """What ``benchmarks/<name>.py *args*`` prints (JSON), run without valgrind."""
    command = [sys.executable, str(BENCHMARKS / f"{name}.py"), *args]
    done = subprocess.run(command, check=True, capture_output=True, text=True, timeout=120)
    return json.loads(done.stdout)


def child_result(name: str, *args: str) -> Any:
    """What ``benchmarks/<name>.py --child *args*`` prints (JSON), run without valgrind."""
    return script_output(name, "--child", *args)
