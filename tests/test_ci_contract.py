"""``.ci/run``: what it runs, where, and which outcomes fail it.

The script runs against stand-ins for python3, pip, ruff, sphinx-build and nox that record their
calls, so the test is fast and needs no network; the real tools are what CI itself exercises.
The matrix itself is noxfile.py's; that a cell whose pytest collects nothing fails, saying so, is
tested here on pytest itself.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent

FAKE_PYTHON3 = """#!/bin/sh
# Only `python3 -m venv DIR` is expected: make DIR a venv whose tools are the stand-ins.
[ "$1" = "-m" ] && [ "$2" = "venv" ] || exit 99
mkdir -p "$3/bin"
echo "export PATH=\\"$3/bin:\\$PATH\\"" > "$3/bin/activate"
for tool in pip ruff sphinx-build nox; do cp "$STANDINS/tool" "$3/bin/$tool"; done
echo "venv $3" >> "$LOG"
"""

FAKE_TOOL = """#!/bin/sh
name=$(basename "$0")
echo "$name${*:+ $*} @ $PWD corpus=$SCRAPY_RERP_CORPUS" >> "$LOG"
echo "$name bytecode=${PYTHONDONTWRITEBYTECODE-kept}" >> "$LOG.env"
case "$name $1" in
    "ruff check") exit "${FAKE_RUFF_CHECK:-0}" ;;
    "ruff format") exit "${FAKE_RUFF_FORMAT:-0}" ;;
    sphinx-build*) exit "${FAKE_SPHINX:-0}" ;;
    nox*) exit "${FAKE_NOX:-0}" ;;
esac
exit 0
"""


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


class CiRun:
    """A copy of ``.ci/run`` in a clone of its own, run with the stand-ins first on PATH."""

    def __init__(self, tmp_path: Path, bash: str) -> None:
        self.tmp_path = tmp_path
        self.bash = bash
        self.repo = tmp_path / "clone"
        (self.repo / ".ci").mkdir(parents=True)
        shutil.copy(REPO_ROOT / ".ci" / "run", self.repo / ".ci" / "run")
        self.standins = tmp_path / "standins"
        self.standins.mkdir()
        _executable(self.standins / "python3", FAKE_PYTHON3)
        _executable(self.standins / "tool", FAKE_TOOL)
        _executable(self.standins / "npm", FAKE_TOOL)
        self.log = tmp_path / "log"

    def __call__(self, **env: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
        """Run the script (from outside the clone); return the result and the recorded calls."""
        full_env = {
            "PATH": f"{self.standins}{os.pathsep}{os.environ['PATH']}",
            "STANDINS": str(self.standins),
            "LOG": str(self.log),
            "CI": "true",
            **env,
        }
        done = subprocess.run(
            [self.bash, str(self.repo / ".ci" / "run")],
            cwd=self.tmp_path,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        calls = self.log.read_text().splitlines() if self.log.exists() else []
        self.log.unlink(missing_ok=True)
        return done, calls


@pytest.fixture
def ci(tmp_path: Path) -> CiRun:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    return CiRun(tmp_path, bash)


#: The matrix as .ci/run runs it, in two lanes side by side.
LANES = {
    "nox --non-interactive -s tests-3.13(scrapy='newest')",
    "nox --non-interactive -s oldest-3.10(scrapy='2.13.4') reactorless-3.12 epoll-3.11",
}


def test_green_run_installs_lints_then_runs_the_matrix_from_the_repository_root(
    ci: CiRun,
) -> None:
    done, calls = ci()
    assert done.returncode == 0, done.stderr
    repo = ci.repo
    venv = calls[0].removeprefix("venv ")
    commands = [call.split(" @ ")[0] for call in calls[1:]]
    assert commands[:5] == [
        "pip install -q ruff sphinx>=7 nox uv",
        "ruff check",
        "ruff format --check",
        "sphinx-build -W --keep-going -q -b html docs " + f"{venv}/docs-html",
        "npm ci --no-audit --no-fund --prefix tests/support/webbotauth",
    ]
    assert set(commands[5:]) == LANES and len(commands) == 7  # the two lanes, side by side
    corpus = f"{repo}/../shared/corpus"
    assert all(call.endswith(f" @ {repo} corpus={corpus}") for call in calls[1:])
    assert not Path(venv).exists()  # the throwaway environment is removed


def test_the_matrix_runs_with_bytecode_kept(ci: CiRun) -> None:
    # An image that forbids writing bytecode would have every process compile Scrapy again.
    done, _ = ci(PYTHONDONTWRITEBYTECODE="1")
    assert done.returncode == 0, done.stderr
    environments = (ci.tmp_path / "log.env").read_text().splitlines()
    assert [line for line in environments if line.startswith("nox")] == ["nox bytecode=kept"] * 2


def test_every_cell_of_the_script_is_a_session_of_the_noxfile() -> None:
    text = (REPO_ROOT / "noxfile.py").read_text(encoding="utf-8")
    script = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for lane in LANES:
        for cell in lane.removeprefix("nox --non-interactive -s ").split(" "):
            name = cell.split("-")[0].split("(")[0]
            assert f"def {name}(" in text, cell
            assert cell in script, cell
    readme = (REPO_ROOT / "README.rst").read_text(encoding="utf-8")
    assert all(cell in readme for lane in LANES for cell in lane.split(" ")[3:])


@pytest.mark.parametrize("status", [1, 2])
def test_a_failing_cell_fails_the_run(ci: CiRun, status: int) -> None:
    done, _ = ci(FAKE_NOX=str(status))
    assert done.returncode == status


def test_a_cell_in_which_no_test_ran_fails_saying_so(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0"]
        + ["-m", "no_such_marker", str(REPO_ROOT / "tests" / "core" / "test_urls.py")],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 5  # nox fails a cell on any status but 0
    assert "no test ran" in done.stderr


@pytest.mark.parametrize("variable", ["FAKE_RUFF_CHECK", "FAKE_RUFF_FORMAT", "FAKE_SPHINX"])
def test_lint_or_docs_failure_fails_before_the_tests(ci: CiRun, variable: str) -> None:
    done, calls = ci(**{variable: "1"})
    assert done.returncode != 0
    assert not any(call.startswith("nox") for call in calls)


def test_corpus_location_can_be_overridden(ci: CiRun, tmp_path: Path) -> None:
    done, calls = ci(SCRAPY_RERP_CORPUS=str(tmp_path / "elsewhere"))
    assert done.returncode == 0
    assert all(c.endswith(f"corpus={tmp_path / 'elsewhere'}") for c in calls if c.startswith("nox"))


def test_readme_names_the_command_the_script_runs() -> None:
    text = (REPO_ROOT / "README.rst").read_text(encoding="utf-8")
    assert 'pip install -e ".[test]"' in text
    assert "pytest" in text


def test_docs_document_every_setting_and_list_their_pages() -> None:
    from scrapy_rerp.core.settings import known_settings

    docs = REPO_ROOT / "docs"
    reference = (docs / "settings.rst").read_text(encoding="utf-8")
    missing = [name for name in sorted(known_settings()) if f"``{name}``" not in reference]
    assert missing == []
    index = (docs / "index.rst").read_text(encoding="utf-8")
    pages = sorted(p.stem for p in docs.glob("*.rst") if p.stem != "index")
    assert [page for page in pages if f"   {page}\n" not in index] == []


def test_readme_is_a_short_guide() -> None:
    assert len((REPO_ROOT / "README.rst").read_bytes()) <= 12 * 1024
