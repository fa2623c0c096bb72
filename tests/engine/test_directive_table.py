"""A directive is one entry in the engine's table: a test adds two and finds them everywhere.

The package is copied, one entry of each kind of value (per group, whole file) is added to
``DIRECTIVES`` in the copy's ``_directives.py``, and nothing else is changed; a fresh interpreter
then parses, renders, pickles, lints and explains with the copy.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import scrapy_rerp

_NEW_ENTRIES = """\
    Directive("Noise-level", GROUP, keys=("noise-level",)),
    Directive("Archive", FILE, keys=("archive",)),
"""

_CHECKS = r"""
import io, json, pickle, sys
from contextlib import redirect_stdout

from scrapy_rerp.engine import GYM2008, MK1996, RFC9309, parse
from scrapy_rerp import cli

TEXT = (
    "User-agent: *\nNoise-level: 3\nDisallow: /private\n\n"
    "Archive: https://example.com/archive.tar\nNoise-levle: 4\n"
)
report = {"syntaxes": {}}
for syntax in (RFC9309, GYM2008, MK1996):
    robots = parse(TEXT, syntax)
    clone = pickle.loads(pickle.dumps(robots))
    report["syntaxes"][syntax] = {
        "group_value": robots.group_value("Noise-level", "bot"),
        "file_values": list(robots.file_values("Archive")),
        "warnings": [(w.line, w.code) for w in robots.warnings],
        "pickled": [clone.group_value("Noise-level", "bot"), list(clone.file_values("Archive"))],
        "same_str": str(clone) == str(robots),
    }
report["str"] = str(parse(TEXT))


def run(*argv):
    out = io.StringIO()
    with redirect_stdout(out):
        status = cli.main([*argv, "--format", "json"])
    return status, json.loads(out.getvalue())


path = sys.argv[1]
report["lint"] = run("lint", path)
report["explain"] = run("explain", path, "/page")
print(json.dumps(report))
"""


def test_a_new_directive_needs_only_its_table_entry(tmp_path: Path) -> None:
    package = Path(scrapy_rerp.__file__).parent
    copy = tmp_path / "site" / "scrapy_rerp"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    table = copy / "engine" / "_directives.py"
    source = table.read_text(encoding="utf-8")
    end = source.index("\n)\n#: A directive's kind by its name.")
    table.write_text(source[:end] + "\n" + _NEW_ENTRIES.rstrip("\n") + source[end:], "utf-8")
    robots_txt = tmp_path / "robots.txt"
    robots_txt.write_text(
        "User-agent: *\nNoise-level: 3\nDisallow: /private\n\n"
        "Archive: https://example.com/archive.tar\nNoise-levle: 4\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-c", _CHECKS, str(robots_txt)],
        cwd=tmp_path,
        env={"PYTHONPATH": str(copy.parent), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    for syntax, found in report["syntaxes"].items():
        # Parsed: the group's value for its agents, the file's value wherever it is written.
        assert found["group_value"] == "3", syntax
        assert found["file_values"] == ["https://example.com/archive.tar"], syntax
        assert found["pickled"] == ["3", ["https://example.com/archive.tar"]], syntax
        assert found["same_str"], syntax
        # A misspelling of it is an unknown line, as for any directive.
        assert found["warnings"] == [[6, "unknown-directive"]], syntax
    # Rendered: in its group, and with the file's values.
    assert report["str"] == (
        "User-agent: *\nDisallow: /private\nNoise-level: 3\n\n"
        "Archive: https://example.com/archive.tar\n"
    )
    # Known to lint (no "unknown directive" for it, a close match named for its misspelling),
    # and shown by lint's summary and by explain.
    status, lint = report["lint"]
    assert [(p["line"], p["code"]) for p in lint["problems"]] == [(6, "misspelled-directive")]
    assert "Noise-Level" in lint["problems"][0]["message"]
    assert lint["groups"][0]["noise_level"] == 3.0
    assert lint["archives"] == ["https://example.com/archive.tar"]
    status, explained = report["explain"]
    assert explained["syntaxes"]["rfc9309"]["values"]["noise_level"] == 3.0
