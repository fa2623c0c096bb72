"""TDMRep: tdmrep.json parsed and matched, the headers and meta tags read, the techniques
combined in the report's order, and the purposes a reservation forbids."""

from __future__ import annotations

import json
import pickle
import random
import string

import pytest

from scrapy_rerp.engine import (
    MAX_TDMREP_BYTES,
    TDMREP_META_NAMES,
    TDMREP_PATH,
    TDMREP_PURPOSES,
    TDMREP_TECHNIQUES,
    TDMREP_WARNING_CODES,
    USAGE_CATEGORIES,
    TdmRepFile,
    TdmReservation,
    parse_tdmrep,
    robots_meta_tags,
    tdm_reservation,
)
from scrapy_rerp.engine._tdmrep import MAX_TDMREP_ENTRIES, MAX_TDMREP_POLICY_CHARS

POLICY = "https://provider.com/policies/policy.json"
OTHER_POLICY = "https://provider.com/policies/other.json"


def rules(*entries: dict[str, object]) -> TdmRepFile:
    return parse_tdmrep(json.dumps(list(entries)).encode())


def codes(file: TdmRepFile) -> list[str]:
    return [warning.code for warning in file.warnings]


def reserved(
    url: str, file: TdmRepFile | None = None, headers: object = None, meta: object = None
) -> bool | None:
    return tdm_reservation(url, file, headers, meta).reserved


# -- the file -----------------------------------------------------------------------------------


def test_the_constants() -> None:
    assert TDMREP_PATH == "/.well-known/tdmrep.json"
    assert TDMREP_META_NAMES == ("tdm-reservation", "tdm-policy")
    assert TDMREP_PURPOSES == {"train-ai", "ai-input"}
    assert TDMREP_PURPOSES < set(USAGE_CATEGORIES)
    assert TDMREP_TECHNIQUES == ("tdmrep.json", "header", "meta")  # the report's order


def test_a_well_formed_file_keeps_its_entries_in_order() -> None:
    file = rules(
        {"location": "/a/", "tdm-reservation": 1},
        {"location": "/b/", "tdm-reservation": 1, "tdm-policy": POLICY},
        {"location": "/c/*.jpg", "tdm-reservation": 0},
    )
    assert file.valid and file.warnings == ()
    assert [(e.position, e.location, e.reservation, e.policy) for e in file.entries] == [
        (1, "/a/", 1, None),
        (2, "/b/", 1, POLICY),
        (3, "/c/*.jpg", 0, None),
    ]


def test_an_empty_array_is_a_valid_file_that_reserves_nothing() -> None:
    file = parse_tdmrep(b"[]")
    assert file.valid and file.entries == () and file.warnings == ()
    assert reserved("https://example.com/a", file) is None


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"", "not-json"),
        (b"<html>Not found</html>", "not-json"),
        (b'[{"location": "/", "tdm-reservation": 1}', "not-json"),  # cut short
        (b'[{"location": "/", "tdm-reservation": NaN}]', "not-json"),  # not JSON, Python's only
        (b"[" * 100_000 + b"]" * 100_000, "not-json"),  # nested past the recursion limit
        (b"[" + b"9" * 5000 + b"]", "not-json"),  # past int's digit limit
        (b'{"location": "/", "tdm-reservation": 1}', "not-an-array"),
        (b'"/"', "not-an-array"),
        (b"1", "not-an-array"),
        (b"null", "not-an-array"),
        (b"[]" + b" " * MAX_TDMREP_BYTES, "too-large"),
    ],
)
def test_a_body_that_is_not_a_json_array_reserves_nothing(body: bytes, code: str) -> None:
    file = parse_tdmrep(body)
    assert not file.valid
    assert file.entries == ()
    assert codes(file) == [code]
    assert "reserves nothing" in file.warnings[0].message
    assert reserved("https://example.com/a", file) is None


def test_a_str_body_over_the_cap_is_not_read_either() -> None:
    assert codes(parse_tdmrep("[]" + " " * MAX_TDMREP_BYTES)) == ["too-large"]
    assert parse_tdmrep("[]" + " " * (MAX_TDMREP_BYTES - 2)).valid


def test_a_bom_is_skipped_and_bytes_that_are_not_utf8_are_replaced() -> None:
    body = '[{"location": "/", "tdm-reservation": 1}]'
    assert parse_tdmrep(b"\xef\xbb\xbf" + body.encode()).warnings == ()
    assert parse_tdmrep("\ufeff" + body).entries[0].reservation == 1
    file = parse_tdmrep(b'[{"location": "/caf\xe9/", "tdm-reservation": 1}]')
    assert codes(file) == ["not-utf-8"]
    assert file.entries[0].location == "/caf\ufffd/"


def test_a_body_of_another_type_is_the_caller_s_mistake() -> None:
    with pytest.raises(TypeError, match="bytes or str"):
        parse_tdmrep(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        parse_tdmrep([{"location": "/"}])  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [1, 1.0])
def test_the_number_one_reserves(value: object) -> None:
    file = rules({"location": "/", "tdm-reservation": value})
    assert file.entries[0].reservation == 1 and file.warnings == ()


@pytest.mark.parametrize("value", [True, False, "1", "0", 2, -1, 0.5, None, [1], {"v": 1}])
def test_any_other_reservation_is_a_protocol_error_and_unset(value: object) -> None:
    file = rules({"location": "/", "tdm-reservation": value})
    assert codes(file) == ["bad-reservation"]
    assert file.entries[0].reservation is None
    assert reserved("https://example.com/a", file) is None


def test_the_first_matching_entry_decides_even_when_its_reservation_is_unset() -> None:
    # "The most specific match is the first in sequence": a later rule is not consulted.
    file = rules(
        {"location": "/a/", "tdm-reservation": "yes"}, {"location": "/", "tdm-reservation": 1}
    )
    statement = file.reservation("https://example.com/a/b")
    assert statement is not None and statement.entry is not None
    assert statement.entry.position == 1 and statement.reservation is None
    assert reserved("https://example.com/a/b", file) is None
    assert reserved("https://example.com/b", file) is True


@pytest.mark.parametrize(
    ("entry", "code"),
    [
        ({"tdm-reservation": 1}, "bad-location"),
        ({"location": 1, "tdm-reservation": 1}, "bad-location"),
        ({"location": ["/"], "tdm-reservation": 1}, "bad-location"),
        ({"location": "", "tdm-reservation": 1}, "bad-location"),
        ({"location": "directory-a/", "tdm-reservation": 1}, "bad-location"),
        ({"location": "https://provider.com/", "tdm-reservation": 1}, "bad-location"),
    ],
)
def test_an_entry_without_a_usable_location_is_skipped(entry: dict[str, object], code: str) -> None:
    file = rules(entry, {"location": "/", "tdm-reservation": 0})
    assert codes(file) == [code]
    assert [e.position for e in file.entries] == [2]
    assert reserved("https://provider.com/directory-a/x", file) is False


def test_entries_that_are_not_objects_are_skipped() -> None:
    file = parse_tdmrep(b'[1, "/", null, [], {"location": "/", "tdm-reservation": 1}]')
    assert codes(file) == ["not-an-object"] * 4
    assert [e.position for e in file.entries] == [5]


def test_unknown_properties_are_named_and_ignored() -> None:
    file = rules({"location": "/", "tdm_reservation": 1, "tdm-reservation": 1, "x": 2})
    assert codes(file) == ["unknown-property", "unknown-property"]
    assert [w.text for w in file.warnings] == ["tdm_reservation", "x"]
    assert file.entries[0].reservation == 1


def test_a_property_given_twice() -> None:
    same = parse_tdmrep(b'[{"location": "/", "tdm-reservation": 1, "tdm-reservation": 1}]')
    assert codes(same) == ["duplicate-property"] and same.entries[0].reservation == 1
    differ = parse_tdmrep(b'[{"location": "/", "tdm-reservation": 1, "tdm-reservation": 0}]')
    assert codes(differ) == ["duplicate-property"] and differ.entries[0].reservation is None
    assert "different values" in differ.warnings[0].message
    # 1 and true are equal in Python, not in JSON.
    mixed = parse_tdmrep(b'[{"location": "/", "tdm-reservation": 1, "tdm-reservation": true}]')
    assert mixed.entries[0].reservation is None
    place = parse_tdmrep(b'[{"location": "/a", "location": "/b", "tdm-reservation": 1}]')
    assert codes(place) == ["duplicate-property", "bad-location"] and place.entries == ()
    policy = parse_tdmrep(
        f'[{{"location": "/", "tdm-reservation": 1, "tdm-policy": "{POLICY}",'
        f' "tdm-policy": "{OTHER_POLICY}"}}]'.encode()
    )
    assert policy.entries[0].policy is None and policy.entries[0].reservation == 1


@pytest.mark.parametrize(
    "value",
    [
        1,
        None,
        "",
        "   ",
        "https://a b/",
        "https://a/\x00",
        "https://a/" + "p" * MAX_TDMREP_POLICY_CHARS,
    ],
)
def test_a_policy_that_is_no_url_is_ignored_and_the_reservation_stands(value: object) -> None:
    file = rules({"location": "/", "tdm-reservation": 1, "tdm-policy": value})
    assert codes(file) == ["bad-policy"]
    assert file.entries[0].policy is None
    reservation = tdm_reservation("https://example.com/", file)
    assert reservation.reserved is True and reservation.policy is None
    assert reservation.usage("train-ai").preference == "disallowed"


def test_a_policy_is_kept_as_written_but_stripped() -> None:
    file = rules({"location": "/", "tdm-reservation": 1, "tdm-policy": f"  {POLICY}\n"})
    assert file.entries[0].policy == POLICY


def test_too_many_entries_and_warnings_are_bounded() -> None:
    many = [{"location": f"/{n}/", "tdm-reservation": 1} for n in range(MAX_TDMREP_ENTRIES + 10)]
    file = rules(*many)
    assert len(file.entries) == MAX_TDMREP_ENTRIES
    assert codes(file) == ["too-many"]
    assert reserved(f"https://example.com/{MAX_TDMREP_ENTRIES - 1}/", file) is True
    assert reserved(f"https://example.com/{MAX_TDMREP_ENTRIES}/", file) is None
    noisy = parse_tdmrep(json.dumps(list(range(MAX_TDMREP_ENTRIES))).encode())
    assert len(noisy.warnings) == 257 and noisy.warnings[-1].code == "too-many"


def test_every_warning_code_is_documented() -> None:
    bodies = [
        b"x",
        b"{}",
        b"[" + b" " * MAX_TDMREP_BYTES + b"]",
        b'[1, {"location": 1}, {"location": "/\xff", "a": 1, "tdm-reservation": 2,'
        b' "tdm-policy": 3, "a": 2}]',
    ]
    seen = {code for body in bodies for code in codes(parse_tdmrep(body))}
    seen |= {
        w.code
        for w in tdm_reservation(
            "/", None, [("tdm-reservation", "1"), ("tdm-reservation", "0")]
        ).warnings
    }
    assert seen <= set(TDMREP_WARNING_CODES)
    assert seen | {"too-many"} == set(TDMREP_WARNING_CODES)


def test_a_parsed_file_is_a_value() -> None:
    body = json.dumps([{"location": "/a/*.pdf$", "tdm-reservation": 1, "tdm-policy": POLICY}])
    file = parse_tdmrep(body)
    assert file == parse_tdmrep(body.encode())
    copy = pickle.loads(pickle.dumps(file))
    assert copy == file
    assert copy.reservation("/a/b.pdf") == file.reservation("/a/b.pdf") is not None
    with pytest.raises(AttributeError):
        file.valid = False  # type: ignore[misc]
    built = TdmRepFile(
        entries=file.entries, warnings=(), valid=True
    )  # from entries alone: its patterns compiled
    assert built == file and built.reservation("/a/b.pdf") == file.reservation("/a/b.pdf")


# -- matching a location ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("location", "url", "matches"),
    [
        ("/", "https://example.com/", True),
        ("/", "https://example.com", True),  # no path is "/"
        ("/a", "https://example.com/abc", True),  # a prefix
        ("/a/", "https://example.com/a", False),
        ("/a$", "https://example.com/a", True),
        ("/a$", "https://example.com/a?x=1", False),  # the query is matched, as in robots.txt
        ("/a?x=1", "https://example.com/a?x=1&y=2", True),
        ("/a", "https://example.com/a#top", True),  # the fragment is not
        ("/a/b$", "https://example.com/a/b#top", True),
        ("*.pdf", "https://example.com/x/y.pdf", True),
        ("/*.pdf$", "https://example.com/x/y.pdf?download", False),
        ("/a/**/b", "https://example.com/a/x/b", True),
        ("/a$b", "https://example.com/a$b", True),  # a "$" before the end is a literal
        ("/a$b", "https://example.com/a%24b", True),
        ("/a%2A", "https://example.com/a*", True),  # %2A matches a literal "*"
        ("/a%2a", "https://example.com/a*", True),  # hex digits in any case
        ("/a*", "https://example.com/a-anything", True),
        ("/%61", "https://example.com/a", True),  # an unreserved character escaped
        ("/a", "https://example.com/%61", True),
        ("/a%2Fb", "https://example.com/a/b", False),  # a reserved one is not decoded
        ("/a%3Fb", "https://example.com/a?b", False),
        ("/été/", "https://example.com/%C3%A9t%C3%A9/x", True),  # UTF-8, %-escaped
        ("/%C3%A9t%C3%A9/", "https://example.com/été/x", True),
        ("/%c3%a9", "https://example.com/%C3%A9", True),
        ("/a b", "https://example.com/a%20b", True),  # what cannot stand in a URL is escaped
        ("/a%20b", "https://example.com/a b", True),
        ("/A", "https://example.com/a", False),  # case sensitive
        ("/a%7e", "https://example.com/a~", True),
    ],
)
def test_a_location_matches_as_robots_txt_patterns_do(
    location: str, url: str, matches: bool
) -> None:
    file = rules({"location": location, "tdm-reservation": 1})
    assert file.warnings == ()
    assert (file.reservation(url) is not None) is matches


def test_a_path_or_bytes_may_be_asked_about() -> None:
    file = rules({"location": "/a/", "tdm-reservation": 1})
    assert file.reservation("/a/b") is not None
    assert file.reservation("/a/b?c") is not None
    assert file.reservation(b"https://example.com/a/b") is not None
    assert tdm_reservation(b"/a/b", file).reserved is True
    with pytest.raises(TypeError, match="url"):
        file.reservation(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="url"):
        tdm_reservation(7, file)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="TdmRepFile"):
        tdm_reservation("/a", json.dumps([]))  # type: ignore[arg-type]


def test_the_statement_names_the_entry() -> None:
    file = rules(
        {"location": "/x/", "tdm-reservation": 0}, {"location": "/b/", "tdm-reservation": 1}
    )
    statement = file.reservation("https://example.com/b/c")
    assert statement is not None
    assert statement.technique == "tdmrep.json"
    assert statement.source == 'tdmrep.json entry 2 (location "/b/")'
    assert statement.entry == file.entries[1]
    assert statement.policy_source is None
    with_policy = rules({"location": "/", "tdm-reservation": 1, "tdm-policy": POLICY})
    assert with_policy.reservation("/a").policy_source == 'tdmrep.json entry 1 (location "/")'  # type: ignore[union-attr]


# -- headers and meta tags ----------------------------------------------------------------------


def test_headers_are_read_in_any_case_and_type() -> None:
    for headers in (
        {"TDM-Reservation": "1"},
        [(b"tdm-reservation", b" 1 ")],
        {b"Tdm-Reservation": [b"1"]},  # Scrapy's Headers: a list of values per name
        [("tdm-reservation", "1"), ("tdm-reservation", "1")],  # the same value twice
    ):
        reservation = tdm_reservation("https://example.com/", None, headers)
        assert reservation.reserved is True, headers
        assert reservation.warnings == ()
        assert reservation.statement is not None
        assert reservation.statement.technique == "header"
        assert reservation.statement.source == "tdm-reservation header"


def test_header_lines_that_disagree_are_unset() -> None:
    reservation = tdm_reservation("/", None, [("tdm-reservation", "1"), ("tdm-reservation", "0")])
    assert reservation.reserved is None
    assert [w.code for w in reservation.warnings] == ["conflicting-values"]
    policies = [("tdm-reservation", "1"), ("tdm-policy", POLICY), ("tdm-policy", OTHER_POLICY)]
    both = tdm_reservation("/", None, policies)
    assert both.reserved is True and both.policy is None
    assert [w.code for w in both.warnings] == ["conflicting-values"]


@pytest.mark.parametrize("value", ["", "yes", "true", "01", "1, 1", "1;q=1", "2"])
def test_a_header_that_is_not_1_or_0_leaves_the_file_in_force(value: str) -> None:
    file = rules({"location": "/", "tdm-reservation": 1, "tdm-policy": POLICY})
    reservation = tdm_reservation("https://example.com/a", file, [("tdm-reservation", value)])
    assert [w.code for w in reservation.warnings] == ["bad-reservation"]
    assert reservation.reserved is True
    assert reservation.statement is not None and reservation.statement.technique == "tdmrep.json"
    assert reservation.policy == POLICY


def test_too_many_header_lines_are_bounded() -> None:
    headers = [("tdm-reservation", "1")] * 1000
    reservation = tdm_reservation("/", None, headers)
    assert reservation.reserved is True
    assert [w.code for w in reservation.warnings] == ["too-many"]


def test_meta_tags_are_read_from_the_head_with_the_page_reader() -> None:
    page = (
        b"<html><head><meta name=TDM-Reservation content=' 1 '>"
        b'<meta name="tdm-policy" content="' + POLICY.encode() + b'"></head>'
        b'<body><meta name="tdm-reservation" content="0"></body></html>'
    )
    tags = robots_meta_tags(page)
    assert tags == [("tdm-reservation", " 1 "), ("tdm-policy", POLICY)]
    reservation = tdm_reservation("https://example.com/", None, None, tags)
    assert (reservation.reserved, reservation.policy) == (True, POLICY)
    assert reservation.statement is not None
    assert reservation.statement.source == "meta tag 1 (tdm-reservation)"
    assert reservation.policy_statement is reservation.statement
    assert reservation.statement.policy_source == "meta tag 2 (tdm-policy)"


def test_meta_tags_that_disagree_are_unset_and_other_tags_are_not_read() -> None:
    tags = [("robots", "noai"), ("tdm-reservation", "1"), ("tdm-reservation", "0"), ("tdm", "1")]
    reservation = tdm_reservation("/", None, None, tags)
    assert reservation.reserved is None
    assert [(w.code, w.source) for w in reservation.warnings] == [
        ("conflicting-values", "meta tag 2 (tdm-reservation)")
    ]
    assert tdm_reservation("/", None, None, [("tdm-reservation", None)]).statements == ()


# -- the processing priority --------------------------------------------------------------------


FILE = rules(
    {"location": "/reserved/", "tdm-reservation": 1, "tdm-policy": POLICY},
    {"location": "/", "tdm-reservation": 0},
)


def test_nothing_said_is_unset() -> None:
    reservation = tdm_reservation("https://example.com/a")
    assert reservation == TdmReservation(
        reserved=None,
        policy=None,
        statement=None,
        policy_statement=None,
        statements=(),
        warnings=(),
    )
    assert reservation.usage("train-ai").preference == "unknown"


def test_each_technique_supersedes_the_ones_before() -> None:
    url = "https://example.com/reserved/a"
    assert tdm_reservation(url, FILE).statement.technique == "tdmrep.json"  # type: ignore[union-attr]
    by_header = tdm_reservation(url, FILE, {"tdm-reservation": "0"})
    assert by_header.reserved is False and by_header.policy is None
    assert by_header.statement.technique == "header"  # type: ignore[union-attr]
    by_meta = tdm_reservation(url, FILE, {"tdm-reservation": "0"}, [("tdm-reservation", "1")])
    assert by_meta.reserved is True
    assert by_meta.statement.technique == "meta"  # type: ignore[union-attr]
    # The file's policy was never reset: with rights reserved again, it is in force again.
    assert by_meta.policy == POLICY
    assert by_meta.policy_statement.technique == "tdmrep.json"  # type: ignore[union-attr]
    assert [s.technique for s in by_meta.statements] == ["tdmrep.json", "header", "meta"]


def test_a_policy_is_superseded_on_its_own() -> None:
    url = "https://example.com/reserved/a"
    reservation = tdm_reservation(url, FILE, {"tdm-policy": OTHER_POLICY})
    assert reservation.reserved is True
    assert reservation.statement.technique == "tdmrep.json"  # type: ignore[union-attr]
    assert reservation.policy == OTHER_POLICY
    assert reservation.policy_statement.technique == "header"  # type: ignore[union-attr]
    decision = reservation.usage("train-ai")
    assert f"TDM policy {OTHER_POLICY} (tdm-policy header)" in decision.reason


def test_a_reservation_of_0_keeps_no_policy() -> None:
    reservation = tdm_reservation("/", None, {"tdm-reservation": "0", "tdm-policy": POLICY})
    assert reservation.reserved is False
    assert reservation.policy is None and reservation.policy_statement is None
    assert reservation.warnings == ()  # not a protocol error


# -- purposes -----------------------------------------------------------------------------------


def test_a_reservation_forbids_training_and_ai_input_and_leaves_search() -> None:
    reservation = tdm_reservation("https://example.com/reserved/a", FILE)
    for purpose in ("train-ai", "ai-train", "ai-input", "AI-Input"):
        decision = reservation.usage(purpose)
        assert decision.preference == "disallowed", purpose
        assert decision.reserved is True and decision.policy == POLICY
        assert decision.licensable
        assert decision.statement is reservation.statement
        assert decision.reason.startswith(f"{decision.purpose} disallowed: TDM rights reserved by")
        assert decision.reason.endswith(
            f"a licence may be offered by the TDM policy {POLICY}"
            ' (tdmrep.json entry 1 (location "/reserved/"))'
        )
    assert reservation.usage("ai-train").purpose == "train-ai"
    search = reservation.usage("search")
    assert (search.preference, search.policy, search.statement) == ("unknown", None, None)
    assert search.reason == "TDMRep does not speak to search"


def test_a_reservation_without_a_policy_is_not_licensable() -> None:
    decision = tdm_reservation("/", None, {"tdm-reservation": "1"}).usage("train-ai")
    assert decision.preference == "disallowed" and not decision.licensable
    assert decision.reason == "train-ai disallowed: TDM rights reserved by tdm-reservation header"


def test_no_reservation_allows_the_tdm_purposes() -> None:
    reservation = tdm_reservation("https://example.com/open", FILE)
    decision = reservation.usage("ai-input")
    assert (decision.preference, decision.reserved, decision.licensable) == (
        "allowed",
        False,
        False,
    )
    assert (
        decision.reason
        == 'ai-input allowed: TDM rights not reserved by tdmrep.json entry 2 (location "/")'
    )
    assert reservation.usage("search").preference == "unknown"


def test_an_unknown_purpose_is_the_caller_s_mistake() -> None:
    reservation = tdm_reservation("/")
    with pytest.raises(ValueError, match="unknown usage category"):
        reservation.usage("tdm")
    with pytest.raises(TypeError):
        reservation.usage(None)  # type: ignore[arg-type]


# -- nothing from a site raises -----------------------------------------------------------------

_JSON_PIECES = [
    "[", "]", "{", "}", ",", ":", '"location"', '"tdm-reservation"', '"tdm-policy"', '"/"',
    '"/a*$"', '"*"', '"$"', '"%"', '"%zz"', '"\\ud800"', "1", "0", "1.0", "-0", "1e400", "true",
    "null", '"1"', '"https://p/"', " ", "\n", "\x00", "é", "\ufeff",
]  # fmt: skip
_URLS = ["https://example.com/", "/a*b$", "", "/%", "/%E3%83%84?q#f", "\ud800", "//x", "a"]


def _bodies(count: int) -> list[bytes | str]:
    rng = random.Random(20240510)
    bodies: list[bytes | str] = []
    for n in range(count):
        if n % 3 == 0:
            bodies.append(rng.randbytes(rng.randrange(0, 300)))
        elif n % 3 == 1:
            text = "".join(rng.choices(_JSON_PIECES, k=rng.randrange(0, 60)))
            bodies.append(text.encode("utf-8", "surrogatepass"))
        else:
            entries = [
                {
                    rng.choice(["location", "tdm-reservation", "tdm-policy", "x"]): rng.choice(
                        [1, 0, 2, "/", "/a*", "*.pdf$", None, True, "x", [], {}, 1.5, "\ud800"]
                    )
                    for _ in range(rng.randrange(0, 4))
                }
                for _ in range(rng.randrange(0, 6))
            ]
            bodies.append(json.dumps(entries))
    return bodies


def test_random_files_never_raise() -> None:
    valid = 0
    for body in _bodies(3000):
        file = parse_tdmrep(body)
        valid += file.valid
        assert all(w.code in TDMREP_WARNING_CODES for w in file.warnings)
        for url in _URLS:
            reservation = tdm_reservation(url, file)
            assert reservation.reserved in (True, False, None)
            for purpose in USAGE_CATEGORIES:
                assert reservation.usage(purpose).preference in ("allowed", "disallowed", "unknown")
    assert valid > 500  # the JSON-shaped bodies reach the entries


def test_random_headers_and_meta_never_raise() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        text = "".join(
            rng.choice(string.printable + "é\x00\ufffd") for _ in range(rng.randrange(0, 20))
        )
        raw = rng.randbytes(rng.randrange(0, 20))
        headers = [
            ("tdm-reservation", text),
            (b"tdm-policy", raw),
            ("TDM-Reservation", rng.choice("10 ")),
        ]
        meta = [("tdm-reservation", raw), ("tdm-policy", text), ("tdm-reservation", None)]
        reservation = tdm_reservation(text, FILE, rng.sample(headers, rng.randrange(0, 4)), meta)
        assert all(w.code in TDMREP_WARNING_CODES for w in reservation.warnings)
        for purpose in USAGE_CATEGORIES:
            reservation.usage(purpose)
