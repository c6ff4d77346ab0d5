"""A page parsed into elements with the standard library's HTML parser, for DOM checks
without a browser (the browser test, ``test_html_browser.py``, checks the rendered page)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
FIXTURES = ("compare-sample", "compare-aa-inconclusive", "compare-dont-ship")

VOID = {"meta", "br", "link", "img", "input", "hr", "wbr", "source", "col", "area", "base"}


def load(name: str) -> dict[str, Any]:
    """A comparison document from tests/compare/data."""
    doc: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text())
    return doc


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node] = field(default_factory=list)
    parts: list[str | Node] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def text(self) -> str:
        """The text content, as a browser's ``textContent`` would give it."""
        return "".join(p if isinstance(p, str) else p.text() for p in self.parts)

    def iter(self) -> list[Node]:
        found = [self]
        for child in self.children:
            found += child.iter()
        return found

    def find_all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        return [
            node
            for node in self.iter()
            if (tag is None or node.tag == tag) and (cls is None or cls in node.classes)
        ]

    def by_id(self, ident: str) -> Node:
        found = [node for node in self.iter() if node.attrs.get("id") == ident]
        assert len(found) == 1, f"{len(found)} elements with id {ident!r}"
        return found[0]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        self.stack[-1].parts.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        self.stack[-1].parts.append(node)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].parts.append(data)


def parse(page: str) -> Node:
    """The page's element tree; fails on a tag closed out of order."""
    builder = _Builder()
    builder.feed(page)
    builder.close()
    assert builder.stack == [builder.root], [n.tag for n in builder.stack]
    return builder.root
