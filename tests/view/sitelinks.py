"""What every exported site must be: a folder whose pages fetch nothing and link only to
each other, by relative links."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

from tests.compare.htmltree import parse
from tests.view.synthetic import HOSTILE


def check_links(site: Path) -> list[Path]:
    """Every page of ``site``: nothing to fetch, every link relative and landing on a file
    inside it, every page reached from another one."""
    pages = sorted(site.rglob("*.html"))
    reached: set[Path] = set()
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert HOSTILE not in text
        for node in parse(text).iter():
            assert "src" not in node.attrs, (page, node.tag)  # nothing to fetch
            href = node.attrs.get("href")
            if href is None or href.startswith("#"):
                continue
            parts = urlsplit(href)
            assert not parts.scheme and not parts.netloc and not href.startswith("/"), href
            target = (page.parent / unquote(parts.path)).resolve()
            assert target.is_relative_to(site.resolve()), (page, href)
            assert target.is_file(), (page, href)
            reached.add(target)
    assert {p.resolve() for p in pages} - reached == set()
    return pages
