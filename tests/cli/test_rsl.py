"""RSL licence files in the command line: ``fetch`` and ``lint`` of one, ``check --usage`` and
``page`` reading those a robots.txt names and a page links to (a ``Link`` header, a ``<link>``
tag, a file on another host); each run as a subprocess against local servers, what they were
asked checked."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.support.cli import run, run_json
from tests.support.pages import page
from tests.support.servers import Reply, Server

NS = 'xmlns="https://rslstandard.org/rsl"'
#: /free/ free to use for anything; / (the rest): AI training prohibited, search permitted.
SITE_LICENCE = f"""<?xml version="1.0" encoding="UTF-8"?>
<rsl {NS}>
  <content url="/free/"><license><permits type="usage">all</permits></license></content>
  <content url="/">
    <license><prohibits type="usage">ai-train</prohibits></license>
  </content>
</rsl>
"""
#: /news/: AI uses permitted only against payment (and nothing else permitted).
PAID = f"""<rsl {NS}><content url="/news/"><license><permits type="usage">ai-all</permits>
<payment type="training"/></license></content></rsl>"""
#: Everything: AI answers and search permitted, free.
AI_INPUT = f"""<rsl {NS}><content url="/"><license><permits type="usage">ai-input, search
</permits></license></content></rsl>"""
#: A licence server to obtain a licence from, for everything.
SERVER = f"""<rsl {NS}><content url="/" server="https://rsl.example/api">
<license><permits type="usage">all</permits></license></content></rsl>"""
BOMB = """<?xml version="1.0"?>
<!DOCTYPE rsl [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
<rsl xmlns="https://rslstandard.org/rsl"><content url="/">&b;</content></rsl>"""
RSL = "application/rsl+xml"


def test_fetch_summarises_an_rsl_file(server: Server) -> None:
    server.robots("User-agent: *\nAllow: /\n")
    server.route("/license.xml", Reply(body=SITE_LICENCE, content_type=RSL))
    url = server.url("/license.xml")
    status, doc = run_json("fetch", url)
    assert status == 0
    assert doc["rsl"] is True and doc["valid"] is True and doc["problems"] == []
    assert [content["url"] for content in doc["contents"]] == ["/free/", "/"]
    assert doc["contents"][1]["licenses"][0]["prohibits"] == {"usage": ["ai-train"]}
    lines = run("fetch", url).stdout.splitlines()
    assert lines[0] == f"{url}: an RSL file, 2 content elements"
    assert "    licence 1: prohibits usage ai-train; payment free (none written)" in lines


def test_fetch_of_a_broken_or_hostile_file_exits_one(server: Server) -> None:
    server.robots("User-agent: *\nAllow: /\n")
    server.route("/bomb.xml", Reply(body=BOMB, content_type=RSL))
    server.route("/broken.rsl", Reply(body=f"<rsl {NS}><content url='/'>", content_type=RSL))
    for path, code in (("/bomb.xml", "dtd-refused"), ("/broken.rsl", "not-xml")):
        status, doc = run_json("fetch", server.url(path))
        assert status == 1
        assert doc["valid"] is False and doc["contents"] == []
        assert doc["problems"][0]["code"] == code


def test_lint_of_an_rsl_file(tmp_path: Path, server: Server) -> None:
    good = tmp_path / "license.xml"
    good.write_text(SITE_LICENCE, encoding="utf-8")
    done = run("lint", str(good))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"{good}: an RSL file, 2 content elements", "problems: 0"]
    flawed = tmp_path / "flawed.rsl"
    flawed.write_text(
        f"<rsl {NS}><content><license/></content><content url='/'><license>"
        "<permits type='usage'>ai-train, telepathy</permits><payment type='barter'/>"
        "</license></content></rsl>",
        encoding="utf-8",
    )
    status, doc = run_json("lint", str(flawed))
    assert status == 1
    assert [p["code"] for p in doc["problems"]] == [
        "bad-content",
        "unknown-usage",
        "unknown-payment",
    ]
    # A robots.txt with a License line is a robots.txt: linted as one, the line no problem.
    robots = tmp_path / "robots.txt"
    robots.write_text("License: https://example.com/license.xml\nUser-agent: *\nDisallow:\n")
    status, doc = run_json("lint", str(robots))
    assert status == 0 and doc["problems"] == []
    assert doc["licenses"] == ["https://example.com/license.xml"]


def test_check_usage_reads_the_licence_files_robots_txt_names(
    server: Server, make_server: Callable[[], Server]
) -> None:
    elsewhere = make_server()  # a licence on another host
    elsewhere.route("/paid.xml", Reply(body=PAID, content_type=RSL))
    server.robots(
        "User-agent: *\nDisallow: /private/\n"
        f"License: {server.url('/license.xml')}\nLicense: {elsewhere.url('/paid.xml')}\n"
    )
    server.route("/license.xml", Reply(body=SITE_LICENCE, content_type=RSL))
    robots = server.url("/robots.txt")
    status, doc = run_json(
        "check", robots, "/free/a", "/news/b", "--usage", "search,train-ai,ai-input"
    )
    assert status == 1
    free, news = doc["results"]
    # /free/: the site's file permits all; the other file has nothing to say of it.
    assert {p: d["preference"] for p, d in free["rsl"].items()} == {
        "search": "allowed",
        "train-ai": "allowed",
        "ai-input": "allowed",
    }
    assert free["rsl"]["search"]["file"] == server.url("/license.xml")
    assert free["rsl"]["search"]["content"] == "/free/"
    # /news/: the site's file prohibits AI training (content /, licence 1); the other host's
    # file permits AI uses only against payment, and nothing else.
    assert news["rsl"]["train-ai"]["preference"] == "disallowed"
    assert news["rsl"]["train-ai"]["file"] == server.url("/license.xml")
    assert news["rsl"]["train-ai"]["content"] == "/" and news["rsl"]["train-ai"]["license"] == 1
    assert news["rsl"]["ai-input"]["file"] == elsewhere.url("/paid.xml")
    assert "ai-input only with payment (training)" in news["rsl"]["ai-input"]["reason"]
    assert "permits only ai-all, not search" in news["rsl"]["search"]["reason"]
    assert [f["found"] for f in doc["rsl_files"]] == [
        "HTTP 200, 2 content elements",
        "HTTP 200, 1 content element",
    ]
    assert server.paths().count("/license.xml") == 1 and elsewhere.paths() == ["/paid.xml"]
    done = run("check", robots, "/free/a", "--usage", "search")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[2] == (
        f"  RSL search  ALLOWED     ({server.url('/license.xml')}: content '/free/', licence 1: "
        "search permitted on terms held)"
    )
    assert lines[-2] == f"licence {server.url('/license.xml')} (robots.txt): " + (
        "HTTP 200, 2 content elements"
    )
    # A URL robots.txt disallows: no licence file is downloaded for it, as in a crawl.
    before = len(server.paths())
    done = run("check", robots, "/private/x", "--usage", "train-ai")
    assert done.returncode == 1
    assert server.paths()[before:] == ["/robots.txt"]
    assert "2 licence files (RSL) not downloaded" in done.stderr + done.stdout
    # Without --usage, nothing but robots.txt.
    before = len(server.paths())
    assert run("check", robots, "/news/b").returncode == 0
    assert server.paths()[before:] == ["/robots.txt"]


def test_page_reads_robots_txt_the_link_header_and_the_link_tag(
    server: Server, make_server: Callable[[], Server]
) -> None:
    elsewhere = make_server()
    elsewhere.route("/server.rsl", Reply(body=SERVER, content_type=RSL))
    server.robots(f"User-agent: *\nAllow: /\nLicense: {server.url('/license.xml')}\n")
    server.route("/license.xml", Reply(body=SITE_LICENCE, content_type=RSL))
    server.route("/ai-input.xml", Reply(body=AI_INPUT, content_type=RSL))
    server.route(
        "/free/page",
        page(
            f'<link rel="license" type="{RSL}" href="{elsewhere.url("/server.rsl")}">',
            "text",
            headers={"Link": f'</ai-input.xml>; rel="license"; type="{RSL}"'},
        ),
    )
    status, doc = run_json("page", server.url("/free/page"))
    assert status == 1
    rsl = doc["rsl"]
    assert [(f["url"], f["named_by"]) for f in rsl["files"]] == [
        (server.url("/license.xml"), "robots.txt"),
        (server.url("/ai-input.xml"), "Link header"),
        (elsewhere.url("/server.rsl"), "<link>"),
    ]
    # search: permitted by the robots.txt's file and the page's header, but the <link>'s file
    # has a licence server (a licence must be obtained): refused.
    assert rsl["usage"]["search"]["preference"] == "disallowed"
    assert rsl["usage"]["search"]["file"] == elsewhere.url("/server.rsl")
    # train-ai: the header's file permits only ai-input and search.
    assert rsl["usage"]["train-ai"]["file"] == server.url("/ai-input.xml")
    assert "permits only ai-input, search, not train-ai" in rsl["usage"]["train-ai"]["reason"]
    assert server.paths().count("/ai-input.xml") == 1 and elsewhere.paths() == ["/server.rsl"]
    lines = run("page", server.url("/free/page")).stdout.splitlines()
    found = "HTTP 200, 1 content element"
    assert f"licence {server.url('/ai-input.xml')} (Link header): {found}" in lines
    assert any(line.startswith("  RSL search") and "licence server" in line for line in lines)


def test_page_with_a_broken_licence_or_none(server: Server) -> None:
    server.robots(f"User-agent: *\nAllow: /\nLicense: {server.url('/bomb.xml')}\n")
    server.route("/bomb.xml", Reply(body=BOMB, content_type=RSL))
    server.route("/a", page(body="text"))
    status, doc = run_json("page", server.url("/a"))
    assert status == 0  # a file that states nothing refuses nothing
    assert doc["rsl"]["files"][0]["valid"] is False
    assert doc["rsl"]["usage"]["train-ai"]["preference"] == "unknown"
    server.robots("User-agent: *\nAllow: /\n")
    status, doc = run_json("page", server.url("/a"))
    assert status == 0 and doc["rsl"] is None
