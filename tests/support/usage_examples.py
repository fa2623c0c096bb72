"""The examples of the usage-preference drafts, as they print them (shared by the engine's and
the crawl's tests)."""

#: draft-ietf-aipref-attach-05, section 3.4: the robots.txt example.
ATTACH_ROBOTS_EXAMPLE = """\
User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
"""

#: draft-ietf-aipref-attach-05, introduction: the shortest robots.txt example.
ATTACH_INTRO_ROBOTS_EXAMPLE = """\
User-Agent: *
Allow: /
Content-Usage: train-ai=n
"""

#: draft-ietf-aipref-attach-05, section 2: an HTTP response with the header.
ATTACH_HEADER_EXAMPLE = """\
HTTP/1.1 200 OK
Date: Wed, 23 Apr 2025 04:48:02 GMT
Content-Type: text/plain
Content-Usage: train-ai=n

This is some content.
"""

#: contentsignals.org's robots.txt example.
CONTENTSIGNALS_ORG_EXAMPLE = """\
User-Agent: *
Content-Signal: ai-train=no, search=yes, ai-input=yes
Allow: /
"""
