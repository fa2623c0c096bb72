"""Evidence that cannot be written, in crawls run as a user runs them (``scrapy runspider``,
``scrapy crawl``: subprocesses): the exit status, the one ERROR line, what the site received,
the items scraped, and stats that say what was written and what was lost."""

from __future__ import annotations

import re
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scrapy_rerp.core.evidence import read_records
from scrapy_rerp.crawl.compat import SCRAPY_VERSION
from tests.support.servers import Reply, Server

pytestmark = pytest.mark.scrapy  # Scrapy's command line (markers: pyproject.toml)

PAGES = 12
#: The site's pages: more than a crawl whose evidence fails early gets to.
SITE_PAGES = 40
#: The spider's CONCURRENT_REQUESTS: the most requests in flight when a write fails.
CONCURRENCY = 4

SPIDER = """\
import scrapy


class PagesSpider(scrapy.Spider):
    name = "pages"
    custom_settings = {
        "ADDONS": {"scrapy_rerp.Addon": 100},
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "RETRY_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "CONCURRENT_REQUESTS": 4,  # CONCURRENCY
    }

    def __init__(self, site="", pages="1", **kwargs):
        super().__init__(**kwargs)
        self.site = site
        self.pages = int(pages)

    async def start(self):
        for n in range(self.pages):
            yield scrapy.Request(f"{self.site}/{n}", dont_filter=True)

    def parse(self, response):
        self.logger.info("Parsed %s", response.url)
        yield {"url": response.url}
"""


@pytest.fixture(scope="module")
def site() -> Iterator[Server]:
    with Server(host="127.0.0.7") as s:
        s.robots("User-agent: *\nDisallow: /private\n")
        for n in range(SITE_PAGES):
            # Slow enough that several requests are in flight when a write fails.
            s.route(f"/{n}", Reply(body="ok", delay=0.05))
        yield s


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "pages.py"
    path.write_text(SPIDER)
    return path


def run(
    cwd: Path, *args: str, file_size_limit: int | None = None
) -> subprocess.CompletedProcess[str]:
    def limit() -> None:  # in the child: its regular files cannot grow past the limit
        assert file_size_limit is not None
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        preexec_fn=limit if file_size_limit is not None else None,
    )


def problems(log: str) -> list[str]:
    """The lines a user reads first: WARNING and worse."""
    return [line for line in log.splitlines() if re.search(r"\] (WARNING|ERROR|CRITICAL): ", line)]


def logged_stats(log: str) -> dict[str, int]:
    """The counts of the stats Scrapy dumps at the end of a crawl, as the user reads them."""
    dumped = log.split("Dumping Scrapy stats:", 1)[1]
    return {name: int(value) for name, value in re.findall(r"'([^']+)': (\d+)\b", dumped)}


def evidence_stats(stats: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in stats.items() if k.startswith("robotstxt/evidence/")}


def pages_received(site: Server) -> list[str]:
    return sorted(hit.path for hit in site.hits() if hit.path != "/robots.txt")


def runspider(
    script: Path, site: Server, *settings: str, pages: int = PAGES, **kwargs: int
) -> tuple[int, str]:
    args = ["runspider", str(script), "-a", f"site={site.url('')}", "-a", f"pages={pages}"]
    for setting in settings:
        args += ["-s", setting]
    done = run(script.parent, *args, **kwargs)
    return done.returncode, done.stderr


def test_a_device_that_takes_no_write_stops_the_crawl_before_any_page_with_exit_status_1(
    script: Path, site: Server
) -> None:
    # /dev/full opens, and refuses every write (root or not): the first record, robots.txt's.
    site.clear()
    status, log = runspider(script, site, "RERP_EVIDENCE=/dev/full")
    assert status == 1, log
    error, *others = problems(log)
    assert error.endswith(
        "] ERROR: Evidence: cannot write to /dev/full: OSError: [Errno 28] No space left on "
        "device; the crawl stops (RERP_EVIDENCE_ON_FAILURE = 'stop')"
    ), log
    # Requests still parked for robots.txt as the crawl closes are the parking lot's to drop,
    # with its WARNING (docs/status-policy.rst, "Closing"), as the timing falls.
    assert all("] WARNING: Crawl closing: dropped " in line for line in others), log
    assert "Spider closed (rerp_evidence_failed)" in log
    # robots.txt was read; no page was downloaded, none reached the spider.
    assert [hit.path for hit in site.hits()] == ["/robots.txt"]
    stats = logged_stats(log)
    assert "item_scraped_count" not in stats
    assert "response_received_count" not in stats or stats["response_received_count"] == 1
    # Nothing was written: no count says otherwise. The requests waiting for robots.txt when
    # it failed were not downloaded (counted as stopped, or as dropped by the parking lot as
    # the crawl closed); those still in the scheduler were never asked for.
    ours = evidence_stats(stats)
    ours.pop("robotstxt/evidence/stopped/request", None)
    assert ours == {
        "robotstxt/evidence/failed": 1,
        "robotstxt/evidence/lost": 1,  # robots.txt's record
    }


def test_a_disk_that_fills_mid_crawl_hands_the_spider_no_page_without_its_record(
    script: Path, site: Server, tmp_path: Path
) -> None:
    # The evidence file may grow to 3,000 bytes: robots.txt's record and a few pages' fit,
    # then a write fails mid-record (EFBIG, as ENOSPC would), with requests in flight.
    site.clear()
    evidence = tmp_path / "evidence.jsonl"
    status, log = runspider(
        script, site, f"RERP_EVIDENCE={evidence}", pages=SITE_PAGES, file_size_limit=3_000
    )
    assert status == 1, log
    assert len(problems(log)) == 1, problems(log)
    (error,) = problems(log)
    assert error.endswith(
        f"] ERROR: Evidence: cannot write to {evidence}: OSError: [Errno 27] File too large; "
        "the crawl stops (RERP_EVIDENCE_ON_FAILURE = 'stop')"
    ), log
    with evidence.open("rb") as file:
        read = read_records(file)
    assert read.cut_at_line is not None  # the record being written when the disk filled
    written = {r["url"] for r in read.records if r.get("verdict") == "downloaded"}
    paged = {r["url"] for r in read.records if r["kind"] == "page"}
    scraped = set(re.findall(r"\] INFO: Parsed (\S+)", log))
    assert written, log  # some pages were written before the failure...
    assert len(written) < SITE_PAGES  # ... and not all
    # Every page the spider got has its records written; none without. (A page that says
    # nothing of itself has no page record.)
    assert scraped <= written, (scraped, written)
    stats = logged_stats(log)
    assert stats.get("item_scraped_count", 0) == len(scraped)
    ours = evidence_stats(stats)
    # What was written, counted once; what was not, counted as lost; pages downloaded that
    # could not be recorded are not handed to the spider, and counted.
    assert ours["robotstxt/evidence/robots"] == 1
    assert ours["robotstxt/evidence/decision/downloaded"] == len(written)
    assert ours.get("robotstxt/evidence/page", 0) == len(paged)
    assert ours["robotstxt/evidence/failed"] == 1
    assert ours["robotstxt/evidence/lost"] >= 1
    received = pages_received(site)
    held = ours.get("robotstxt/evidence/stopped/response", 0)
    assert len(received) == stats["downloader/response_count"] - 1  # robots.txt's
    assert len(received) == len(scraped) + held, (received, scraped, ours)
    assert held >= 1  # in flight when the write failed
    not_sent = ours.get("robotstxt/evidence/stopped/request", 0)
    assert (
        f"] INFO: Evidence: after it failed, {not_sent} requests were not downloaded and {held} "
        "responses downloaded were not handed to the spider (rerp_evidence_failed)"
    ) in log
    # The crawl stopped: no page asked after the failure but those in flight then.
    assert len(received) <= len(written) + CONCURRENCY, (received, written)


def test_evidence_that_cannot_be_opened_stops_scrapy_crawl_with_exit_status_1(
    site: Server, tmp_path: Path
) -> None:
    # A path under a regular file ("Not a directory"): no folder can be made there, even as root.
    project = tmp_path / "proj"
    (project / "proj" / "spiders").mkdir(parents=True)
    (project / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (project / "proj" / "__init__.py").write_text("")
    (project / "proj" / "settings.py").write_text("SPIDER_MODULES = ['proj.spiders']\n")
    (project / "proj" / "spiders" / "__init__.py").write_text("")
    (project / "proj" / "spiders" / "pages.py").write_text(SPIDER)
    (tmp_path / "taken").write_text("a file where the evidence's folder should be")
    evidence = tmp_path / "taken" / "evidence.jsonl"
    site.clear()
    done = run(
        project,
        "crawl",
        "pages",
        "-a",
        f"site={site.url('')}",
        "-a",
        f"pages={PAGES}",
        "-s",
        f"RERP_EVIDENCE={evidence}",
    )
    log = done.stderr
    assert done.returncode == 1, log
    (error,) = problems(log)
    assert f"] ERROR: Evidence: cannot open {evidence}: " in error, log
    assert "Not a directory" in error
    assert error.endswith("; the crawl stops (RERP_EVIDENCE_ON_FAILURE = 'stop')")
    assert "Traceback" not in log
    assert site.hits() == []  # the file opens as the spider does: nothing was asked
    stats = evidence_stats(logged_stats(log))
    # Before Scrapy 2.14 the engine is closed once it runs, and the start requests it reads
    # meanwhile are stopped (counted, none downloaded); newer releases close before them.
    stopped = stats.pop("robotstxt/evidence/stopped/request", 0)
    assert stopped == 0 or SCRAPY_VERSION < (2, 14)
    assert stats == {"robotstxt/evidence/failed": 1}


def test_evidence_that_cannot_be_opened_with_continue_counts_every_record_as_lost_only(
    script: Path, site: Server, tmp_path: Path
) -> None:
    (tmp_path / "taken").write_text("a file where the evidence's folder should be")
    evidence = tmp_path / "taken" / "evidence.jsonl"
    site.clear()
    status, log = runspider(
        script, site, f"RERP_EVIDENCE={evidence}", "RERP_EVIDENCE_ON_FAILURE=continue"
    )
    assert status == 0, log  # asked for: the crawl does its job without evidence
    assert len(problems(log)) == 1, problems(log)
    (error,) = problems(log)
    assert error.endswith(
        "; the crawl goes on without evidence (RERP_EVIDENCE_ON_FAILURE = 'continue')"
    ), log
    assert pages_received(site) == sorted(f"/{n}" for n in range(PAGES))
    stats = logged_stats(log)
    assert stats["item_scraped_count"] == PAGES
    # Nothing written: no record counted as written. robots.txt's and each page's decision:
    # lost (a page that says nothing of itself has no page record).
    assert evidence_stats(stats) == {
        "robotstxt/evidence/failed": 1,
        "robotstxt/evidence/lost": 1 + PAGES,
    }


#: A script that runs the crawl itself, and sets its exit status as docs/evidence.rst says.
SCRIPT = """\
import sys

from scrapy.crawler import CrawlerProcess

from pages import PagesSpider

process = CrawlerProcess({"RERP_EVIDENCE": "/dev/full"})
crawler = process.create_crawler(PagesSpider)
process.crawl(crawler, site=sys.argv[1], pages="3")
process.start()
print("finish_reason", crawler.stats.get_value("finish_reason"))
sys.exit(1 if process.bootstrap_failed else 0)
"""


def test_a_script_running_the_crawl_tells_it_stopped_for_its_evidence(
    script: Path, site: Server
) -> None:
    (script.parent / "run.py").write_text(SCRIPT)
    site.clear()
    done = subprocess.run(
        [sys.executable, "run.py", site.url("")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=script.parent,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[-1] == "finish_reason rerp_evidence_failed"
    assert pages_received(site) == []
