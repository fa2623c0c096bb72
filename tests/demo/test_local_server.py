"""The local HTTP servers of the demo and the crawl tests (scrapy_rerp/demo/local_server.py), spoken
to with urllib and raw sockets: what they answer, and what they record of each request."""

from __future__ import annotations

import http.client
import socket
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET

import pytest

from scrapy_rerp.demo.local_server import Hit, Reply, Server, gaps, servers, urlset


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of a GET, error statuses included."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers.items()), response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers.items()), error.read()


def refuses(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(2)
        return probe.connect_ex((host, port)) != 0


# -- replies --------------------------------------------------------------------------------------


def test_a_route_is_served_with_its_status_headers_and_body() -> None:
    with Server() as server:
        server.route(
            "/page",
            Reply(
                status=201,
                body="héllo",
                headers={"X-Test": "yes"},
                content_type="text/html; charset=utf-8",
            ),
        )
        status, headers, body = get(server.url("/page"))
    assert status == 201
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["X-Test"] == "yes"
    assert headers["Content-Length"] == str(len("héllo".encode()))
    assert body == "héllo".encode()


def test_a_path_without_a_route_gets_the_default_page_and_robots_txt_404() -> None:
    with Server() as server:
        status, headers, body = get(server.url("/anything?q=1"))
        assert (status, headers["Content-Type"]) == (200, "text/html")
        assert body == b"<html><body>/anything?q=1</body></html>"
        status, headers, body = get(server.url("/robots.txt"))
        assert (status, headers["Content-Type"], body) == (404, "text/plain", b"not found")
        server.default = lambda hit: Reply(status=410, body=f"gone: {hit.path}")
        assert get(server.url("/old"))[0::2] == (410, b"gone: /old")
        assert get(server.url("/robots.txt"))[0] == 404  # robots.txt is not the default's


def test_robots_sets_robots_txt() -> None:
    with Server() as server:
        server.robots("User-agent: *\nDisallow: /private\n", headers={"Cache-Control": "no-cache"})
        status, headers, body = get(server.url("/robots.txt"))
    assert (status, body) == (200, b"User-agent: *\nDisallow: /private\n")
    assert headers["Cache-Control"] == "no-cache"


def test_routes_match_path_and_query_first_then_the_path_alone() -> None:
    with Server() as server:
        server.route("/search", Reply(body="any query"))
        server.route("/search?q=rules", Reply(body="this query"))
        assert get(server.url("/search?q=rules"))[2] == b"this query"
        assert get(server.url("/search?q=other"))[2] == b"any query"
        assert get(server.url("/search"))[2] == b"any query"


def test_replies_in_turn_the_last_one_repeating_and_route_starts_them_again() -> None:
    with Server() as server:
        turns = [
            Reply(status=503, body="busy"),
            Reply(status=503, body="busy"),
            Reply(body="rules"),
        ]
        server.route("/robots.txt", turns)
        assert [get(server.url("/robots.txt"))[0] for _ in range(4)] == [503, 503, 200, 200]
        server.route("/robots.txt", turns)
        assert get(server.url("/robots.txt"))[0] == 503


def test_a_callable_route_answers_from_the_hit() -> None:
    with Server() as server:
        server.route("/echo", lambda hit: Reply(body=hit.header("user-agent") or "none"))
        assert get(server.url("/echo"), {"User-Agent": "EchoBot/1.0"})[2] == b"EchoBot/1.0"


def test_a_redirect_has_its_location_and_no_content_type() -> None:
    with Server() as server:
        server.route("/moved", Reply.redirect("http://elsewhere.example/robots.txt", 302))
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("GET", "/moved")
        response = connection.getresponse()
        response.read()
        connection.close()
    assert response.status == 302
    assert response.getheader("Location") == "http://elsewhere.example/robots.txt"
    assert response.getheader("Content-Type") is None


def test_head_gets_no_body_and_post_is_drained_on_a_kept_alive_connection() -> None:
    with Server() as server:
        server.route("/form", Reply(body="thanks"))
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("POST", "/form", body=b"a=1&b=2")
        posted = connection.getresponse()
        assert posted.read() == b"thanks"
        connection.request("HEAD", "/form")  # the same connection: the POST body was read
        head = connection.getresponse()
        assert head.read() == b""
        connection.close()
        hits = server.hits("/form")
    assert [h.method for h in hits] == ["POST", "HEAD"]
    assert head.getheader("Content-Length") == "0"
    assert hits[1].status == 200 and hits[1].body_size == 0


# -- what the server records ----------------------------------------------------------------------


def test_hits_record_method_path_headers_status_time_and_bytes() -> None:
    with Server() as server:
        server.route("/a", Reply(body="0123456789"))
        before = time.monotonic()
        get(server.url("/a?x=1"), {"User-Agent": "RecordBot/2.0", "X-Probe": "1"})
        get(server.url("/b"))
        after = time.monotonic()
        hits = server.hits()
        assert server.paths() == ["/a?x=1", "/b"]
        assert server.count("/b") == 1 and server.hits("/b") == hits[1:]
        server.clear()
        assert server.hits() == []
    first = hits[0]
    assert isinstance(first, Hit)
    assert (first.method, first.path, first.status) == ("GET", "/a?x=1", 200)
    assert first.header("user-agent") == "RecordBot/2.0"
    assert first.headers["X-Probe"] == "1"
    assert first.header("Host") == f"127.0.0.1:{server.port}"
    assert first.header("X-Missing") is None
    assert (first.body_size, first.bytes_sent, first.completed) == (10, 10, True)
    assert before <= first.time <= hits[1].time <= after
    assert gaps(hits) == [hits[1].time - first.time]


def test_a_delayed_reply_arrives_after_its_delay_and_the_hit_has_the_arrival_time() -> None:
    with Server() as server:
        server.route("/slow", Reply(body="late", delay=0.3))
        started = time.monotonic()
        assert get(server.url("/slow"))[2] == b"late"
        elapsed = time.monotonic() - started
        (hit,) = server.hits()
    assert elapsed >= 0.3
    assert hit.time - started < 0.3  # recorded when the request came in, not when answered


def test_gaps_are_the_seconds_between_consecutive_hits() -> None:
    hits = [Hit(time=t, method="GET", path="/", headers={}) for t in (1.0, 1.5, 3.0)]
    assert gaps(hits) == [0.5, 1.5]
    assert gaps(hits[:1]) == []


def test_a_client_that_hangs_up_leaves_the_rest_of_a_slow_body_unsent() -> None:
    with Server() as server:
        server.route("/big", Reply(body=b"x" * 1000, chunk_size=10, chunk_delay=0.02))
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as client:
            client.sendall(b"GET /big HTTP/1.1\r\nHost: test\r\n\r\n")
            received = b""
            while len(received.partition(b"\r\n\r\n")[2]) < 10:  # the head and a chunk
                received += client.recv(100)
            assert received.startswith(b"HTTP/1.1 200")
        # 100 chunks take 2 s; the server notices the closed socket within a few writes.
        deadline = time.monotonic() + 5
        sent = -1
        while time.monotonic() < deadline:
            time.sleep(0.3)
            (hit,) = server.hits()
            if hit.bytes_sent == sent:
                break
            sent = hit.bytes_sent
    assert (hit.body_size, hit.completed) == (1000, False)
    assert 10 <= hit.bytes_sent < 1000


def test_an_error_reply_closes_the_connection_without_an_answer() -> None:
    with Server() as server:
        server.route("/robots.txt", Reply.error())
        with pytest.raises((urllib.error.URLError, http.client.HTTPException, ConnectionError)):
            get(server.url("/robots.txt"))
        (hit,) = server.hits()
    assert hit.status is None and hit.bytes_sent == 0 and not hit.completed


def test_a_lying_content_length_cuts_the_body_short() -> None:
    with Server() as server:
        server.route("/short", Reply(body="ten bytes!", content_length=100))
        with pytest.raises(http.client.IncompleteRead) as raised:
            get(server.url("/short"))
    assert raised.value.partial == b"ten bytes!"


def test_a_trickling_head_comes_one_byte_at_a_time() -> None:
    delay = 0.005
    with Server() as server:
        server.route("/trickle", Reply(body="ok", head_byte_delay=delay))
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as client:
            client.sendall(b"GET /trickle HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
            started = time.monotonic()
            received = b""
            reads = 0
            while chunk := client.recv(4096):
                received += chunk
                reads += 1
            elapsed = time.monotonic() - started
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and body == b"ok"
    assert elapsed >= (len(head) + 3) * delay  # a sleep after every byte of the head
    assert reads >= 10  # in many small pieces, not in one


def test_urlset_is_a_sitemap_listing_the_urls() -> None:
    reply = urlset(["http://a.example/1", "http://a.example/2?x=1"])
    assert reply.content_type == "application/xml"
    namespace = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    root = ET.fromstring(reply.body_bytes())
    assert [loc.text for loc in root.findall("s:url/s:loc", namespace)] == [
        "http://a.example/1",
        "http://a.example/2?x=1",
    ]


# -- addresses and lifecycle ----------------------------------------------------------------------


def test_a_server_on_another_loopback_host_is_another_origin() -> None:
    with Server(host="127.0.0.2") as other, Server() as first:
        assert other.origin == f"http://127.0.0.2:{other.port}"
        assert other.netloc == f"127.0.0.2:{other.port}"
        assert get(other.url("/x"))[0] == 200
        assert refuses("127.0.0.1", other.port)  # it listens on 127.0.0.2 only
        assert first.origin == f"http://127.0.0.1:{first.port}"
        assert other.paths() == ["/x"] and first.paths() == []
    assert other.hits()[0].header("Host") == f"127.0.0.2:{other.port}"


def test_a_host_name_addresses_the_same_socket_under_another_name() -> None:
    with Server(host_name="localhost") as server:
        assert server.host == "127.0.0.1"
        assert server.origin == f"http://localhost:{server.port}"
        assert server.netloc == f"localhost:{server.port}"
        assert server.url("/a") == f"http://localhost:{server.port}/a"
        assert server.url("/a", host="127.0.0.1") == f"http://127.0.0.1:{server.port}/a"
        get(server.url("/a"))
        get(server.url("/b", host="127.0.0.1"))
        hosts = [h.header("Host") for h in server.hits()]
    assert hosts == [f"localhost:{server.port}", f"127.0.0.1:{server.port}"]


def test_servers_start_n_origins_for_a_block_and_stop_them_after() -> None:
    with servers(3) as started:
        ports = {s.port for s in started}
        assert len(ports) == 3
        for server in started:
            assert get(server.url("/hello"))[0] == 200
            assert server.paths() == ["/hello"]
    for port in ports:
        assert refuses("127.0.0.1", port)


def test_stop_closes_the_socket_and_a_server_never_started_stops_at_once() -> None:
    server = Server().start()
    port = server.port
    server.stop()
    assert refuses("127.0.0.1", port)
    idle = Server()
    started = time.monotonic()
    idle.stop()
    assert time.monotonic() - started < 1
    assert refuses("127.0.0.1", idle.port)
