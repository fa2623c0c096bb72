"""``scrapy-rerp`` as a whole (``scrapy_rerp.cli``: its arguments, its output): usage errors,
``--version``, no Scrapy imported, errors as one line (and as a JSON document), no traceback
whatever the input, a closed output pipe, and the keys of every JSON document."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import STAR_GROUP, run, run_json, write
from tests.support.servers import Server

# --- arguments -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("check",),
        ("check", "robots.txt"),  # no URL
        ("check", "robots.txt", "/x", "--syntax", "rfc1234"),
        ("frobnicate", "robots.txt"),
    ],
)
def test_usage_errors_exit_two(args: tuple[str, ...]) -> None:
    done = run(*args)
    assert done.returncode == 2
    assert "usage:" in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("--format", "json", "check", "ROBOTS", "/private/x"),
        ("check", "--format", "json", "ROBOTS", "/private/x"),
        ("check", "ROBOTS", "/private/x", "--format", "json"),
    ],
)
def test_format_before_or_after_the_command(tmp_path: Path, args: tuple[str, ...]) -> None:
    robots = write(tmp_path, STAR_GROUP)
    done = run(*(robots if arg == "ROBOTS" else arg for arg in args))
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    assert document["command"] == "check" and document["results"][0]["allowed"] is False


def test_format_after_the_command_wins(tmp_path: Path) -> None:
    done = run("--format", "json", "check", write(tmp_path, STAR_GROUP), "/x", "--format", "text")
    assert (done.returncode, done.stdout) == (0, "ALLOWED     /x  (no rule matched)\n")
    done = run("--format", "json", "check", write(tmp_path, STAR_GROUP), "/x")
    assert json.loads(done.stdout)["exit_status"] == 0


def test_timeout_must_be_a_positive_number_of_seconds(server: Server) -> None:
    for value in ("0", "-1", "nan", "inf", "soon"):
        done = run("fetch", server.url("/robots.txt"), "--timeout", value)
        assert done.returncode == 2 and "--timeout" in done.stderr, value
        assert "Traceback" not in done.stderr
    done = run("page", server.url("/"), "--timeout", "0")  # read by the same rule
    assert done.returncode == 2 and "expected a positive number of seconds" in done.stderr
    assert server.hits() == []


def test_version() -> None:
    import scrapy_rerp

    done = run("--version")
    assert done.returncode == 0
    assert scrapy_rerp.__version__ in done.stdout


def test_cli_does_not_import_scrapy_or_twisted() -> None:
    code = (
        "import sys, scrapy_rerp.cli\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scrapy', 'twisted')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# --- output ----------------------------------------------------------------------------------


def test_errors_in_json_are_a_json_document(tmp_path: Path) -> None:
    done = run("check", str(tmp_path / "absent"), "/x", "--format", "json")
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"].startswith("cannot read")


@pytest.mark.parametrize("command", [("check", "/a", "/b"), ("explain", "/a")])
def test_binary_files_get_no_verdict(tmp_path: Path, command: tuple[str, ...]) -> None:
    junk = write(tmp_path, random.Random(17).randbytes(300_000), "junk.bin")
    done = run(command[0], junk, *command[1:])
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"scrapy-rerp: error: {junk}: binary data, not a robots.txt: a crawler finds no rules "
        "in it; no verdict on it without --read-anyway\n"
    )
    anyway = run(command[0], junk, *command[1:], "--read-anyway")
    assert anyway.returncode in (0, 1), anyway.stderr
    assert "Traceback" not in anyway.stderr


def test_binary_files_lint(tmp_path: Path) -> None:
    done = run("lint", write(tmp_path, random.Random(17).randbytes(300_000), "junk.bin"))
    assert done.returncode == 1 and done.stderr == ""
    assert "  file: error: binary data, not a robots.txt" in done.stdout


def pipe_into_head(args: list[str], lines: int = 2) -> tuple[int, str]:
    """Run the command with its output read by something that stops after ``lines`` lines."""
    process = subprocess.Popen(
        [sys.executable, "-m", "scrapy_rerp", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    for _ in range(lines):
        process.stdout.readline()
    process.stdout.close()  # the reader goes away, as `head` does
    stderr = process.stderr.read().decode("utf-8", "replace")
    return process.wait(timeout=120), stderr


def test_closed_pipe_lint(tmp_path: Path) -> None:
    junk = random.Random(3).randbytes(300_000)
    status, stderr = pipe_into_head(["lint", write(tmp_path, junk, "junk.bin")])
    assert stderr == ""
    assert status == 1  # what it would have been: the junk has problems


def test_closed_pipe_check(tmp_path: Path) -> None:
    urls = [f"/private/{n}" for n in range(20000)]
    status, stderr = pipe_into_head(["check", write(tmp_path, STAR_GROUP), *urls])
    assert stderr == ""
    assert status == 1


# --- JSON, one document with stable keys -----------------------------------------------------


def test_json_documents_have_their_documented_keys(tmp_path: Path, server: Server) -> None:
    robots = write(tmp_path, STAR_GROUP)
    server.robots(STAR_GROUP)
    _, check = run_json("check", robots, "/a")
    assert set(check) == {
        "command",
        "robots",
        "syntax",
        "agent",
        "usage_categories",
        "results",
        "notes",
        "exit_status",
    }
    assert set(check["results"][0]) == {"url", "allowed", "line", "rule", "reason", "usage"}
    assert check["usage_categories"] == [] and check["results"][0]["usage"] == {}
    assert set(check["robots"]) == {
        "source",
        "bytes",
        "truncated",
        "fetch",
        "not_robots_txt",
        "robots_txt_overridden",
    }
    assert check["robots"]["not_robots_txt"] is None
    _, explain = run_json("explain", robots, "/a")
    assert set(explain) == {
        "command",
        "robots",
        "url",
        "agent",
        "syntax",
        "allowed",
        "syntaxes",
        "exit_status",
    }
    assert set(explain["syntaxes"]["rfc9309"]) == {
        "allowed",
        "line",
        "rule",
        "reason",
        "groups",
        "group_reason",
        "matching_rules",
        "usage",
        "values",
    }
    assert set(explain["syntaxes"]["rfc9309"]["usage"]["search"]) == {
        "preference",
        "line",
        "statement",
        "reason",
    }
    _, lint = run_json("lint", robots)
    assert set(lint) == {
        "command",
        "robots",
        "syntax",
        "problems",
        "compared",
        "groups",
        "sitemaps",
        "invalid_sitemaps",
        "host",
        "clean_params",
        "licenses",
        "exit_status",
    }
    assert set(lint["compared"]) == {
        "urls",
        "agents",
        "comparisons",
        "skipped_comparisons",
        "budget",
    }
    _, fetch = run_json("fetch", server.url("/robots.txt"))
    assert set(fetch) == {
        "command",
        "url",
        "syntax",
        "agent",
        "fetch",
        "conclusion",
        "not_robots_txt",
        "crawl_delay",
        "store",
        "robots_txt_overridden",
        "groups",
        "sitemaps",
        "invalid_sitemaps",
        "host",
        "clean_params",
        "licenses",
        "exit_status",
    }
    assert set(fetch["fetch"]) == {
        "url",
        "final_url",
        "status",
        "outcome",
        "reason",
        "redirects",
        "truncated",
        "bytes",
        "lifetime",
        "expires",
        "retry_after",
        "from_store",
    }
