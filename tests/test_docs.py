"""Every Python block in README.md and docs/*.md runs as it stands, or says it is a fragment.

The conventions (docs/testing.md, "Code blocks in the docs"):

- a ```python block runs as a file, in a fresh interpreter in an empty
  directory; its output must match the ```text block right after it (only
  blank lines between), where ``...`` stands for any text (doctest's
  ELLIPSIS); with no such block it must print nothing;
- ``<!-- fragment -->`` on the line before the fence: a piece of a program,
  not run;
- ``<!-- file: path -->`` on the line before the fence: the block is that
  repository file, word for word.

And every relative link (``[text](path#anchor)``) names a file or folder of
the repository and, for a Markdown file, a heading in it: the README sends a
newcomer on into docs/, so a page moved or a heading renamed must not leave a
link dangling.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_MARKER = re.compile(r"<!--\s*(fragment|file:\s*(\S+))\s*-->")
_FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)")

# Blocks that fail today because of a bug another branch fixes, by document
# and a line of the block (line numbers move as the docs grow); xfail_strict
# turns the fix into a failure here, so the entry cannot outlive the bug.
KNOWN_BUGS: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Block:
    """One fenced code block of a Markdown file."""

    doc: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    marker: str | None  # "fragment", "file:<path>", "unknown:<comment>" or None
    output: str | None  # the ```text block right after it, if any

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    """The fenced blocks of ``doc``, with their markers and output blocks."""
    lines = doc.read_text().splitlines()
    raw: list[tuple[int, str, str, str | None, int]] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        start, ticks, lang = i, fence.group(1), fence.group(2)
        i += 1
        while i < len(lines) and lines[i].strip() != ticks:
            i += 1
        before = lines[start - 1].strip() if start else ""
        marker = _MARKER.fullmatch(before)
        kind = None
        if marker:
            kind = "fragment" if marker.group(1) == "fragment" else f"file:{marker.group(2)}"
        elif before.startswith("<!--"):
            kind = f"unknown:{before}"  # a misspelt marker must not pass silently
        body = "\n".join(lines[start + 1 : i]) + "\n"
        raw.append((start, lang, body, kind, i))
        i += 1
    out = []
    for n, (start, lang, body, kind, end) in enumerate(raw):
        output = None
        if n + 1 < len(raw):
            nstart, nlang, nbody, _, _ = raw[n + 1]
            if nlang == "text" and all(not s.strip() for s in lines[end + 1 : nstart]):
                output = nbody
        out.append(Block(doc, start + 1, lang, body, kind, output))
    return out


ALL = [b for doc in DOCS for b in blocks(doc)]
RUNNABLE = [b for b in ALL if b.lang == "python" and b.marker is None]
FILES = [b for b in ALL if b.marker and b.marker.startswith("file:")]


def _param(block: Block) -> object:
    doc = str(block.doc.relative_to(ROOT))
    bug = next(
        (why for (d, line), why in KNOWN_BUGS.items() if d == doc and line in block.text), None
    )
    marks = [pytest.mark.xfail(reason=bug, strict=True)] if bug else []
    return pytest.param(block, id=block.id, marks=marks)


def test_the_docs_have_runnable_examples() -> None:
    """The parser finds the blocks this file tests: the README's examples run."""
    readme = [b for b in RUNNABLE if b.doc.name == "README.md"]
    assert len(readme) >= 4
    assert all(b.output is not None for b in RUNNABLE), [b.id for b in RUNNABLE if not b.output]


def test_no_block_has_an_unknown_marker() -> None:
    """A comment before a fence is a marker this test knows (a typo would skip nothing)."""
    unknown = [(b.id, b.marker) for b in ALL if b.marker and b.marker.startswith("unknown:")]
    assert unknown == []


def test_parser_reads_markers_and_output_blocks(tmp_path: Path) -> None:
    """The conventions as the parser sees them, on a small document."""
    doc = tmp_path / "doc.md"
    doc.write_text(
        "<!-- fragment -->\n```python\nx = 1\n```\n\n"
        "```python\nprint(2)\n```\n\n```text\n2\n```\n"
        "<!-- file: a/b.toml -->\n```toml\n[x]\n```\n"
        "<!-- fragmnet -->\n```python\ny\n```\n"
    )
    found = [(b.line, b.lang, b.marker, b.output) for b in blocks(doc)]
    assert found == [
        (2, "python", "fragment", None),
        (6, "python", None, "2\n"),
        (10, "text", None, None),
        (14, "toml", "file:a/b.toml", None),
        (18, "python", "unknown:<!-- fragmnet -->", None),
    ]


def _newcomer_env() -> dict[str, str]:
    """A README block's environment: a newcomer's, with no secret set (whose
    warning the README must show), unbuffered so that the log lines and the
    prints come in the order a terminal shows them."""
    env = {k: v for k, v in os.environ.items() if k != "JOBSCHED_SECRET"}
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.mark.parametrize("block", [_param(b) for b in RUNNABLE])
def test_python_block_runs_and_prints_what_the_text_says(block: Block, tmp_path: Path) -> None:
    """The block, saved as a file and run, exits 0 and prints its ```text block;
    a README block's stderr is part of what it prints (a newcomer sees both)."""
    script = tmp_path / "example.py"
    script.write_text(block.text)
    readme = block.doc.name == "README.md"
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if readme else subprocess.PIPE,
        env=_newcomer_env() if readme else None,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr or done.stdout
    want = block.output or ""
    checker = doctest.OutputChecker()
    assert checker.check_output(want, done.stdout, doctest.ELLIPSIS), (
        f"{block.id} printed:\n{done.stdout}\nbut the text says:\n{want}"
    )


@pytest.mark.parametrize("block", [pytest.param(b, id=b.id) for b in FILES])
def test_file_block_is_the_repository_file(block: Block) -> None:
    """A block marked as a file shows that file exactly as it is in the repository."""
    path = ROOT / block.marker.removeprefix("file:")  # type: ignore[union-attr]
    assert path.is_file(), f"{block.id} shows {path}, which does not exist"
    assert block.text == path.read_text(), f"{block.id} differs from {path}"


# ── Links ────────────────────────────────────────────────────────────────

_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose(doc: Path, *, spans: bool = False) -> list[tuple[int, str]]:
    """The lines of ``doc`` outside fenced blocks, 1-based; code spans blanked unless ``spans``."""
    out, fence = [], None
    for n, line in enumerate(doc.read_text().splitlines(), 1):
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is None:
            out.append((n, line if spans else _CODE_SPAN.sub("``", line)))
    return out


def anchors(doc: Path) -> set[str]:
    """The anchors GitHub gives the headings of ``doc`` (duplicates get -1, -2, ...)."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in _prose(doc, spans=True):  # a heading's anchor keeps its code's text
        heading = _HEADING.match(line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(2).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(doc: Path) -> list[tuple[int, str]]:
    """The relative link targets of ``doc``'s prose, with their line numbers."""
    return [
        (n, target)
        for n, line in _prose(doc)
        for target in _LINK.findall(line)
        if not re.match(r"[a-z][a-z+.-]*:", target)  # https:, mailto:
    ]


def test_parser_finds_links_and_anchors(tmp_path: Path) -> None:
    """Links in prose count, links in code do not; anchors are GitHub's."""
    doc = tmp_path / "doc.md"
    doc.write_text(
        "# A title\n\n## `jobsched worker`: the (first) one\n\n## A title\n\n"
        "See [b](b.md#x), ![img](i.png), [web](https://example.org) and `[no](c.md)`.\n"
        "```python\n# not a heading\n[no](d.md)\n```\n"
    )
    assert links(doc) == [(7, "b.md#x"), (7, "i.png")]
    assert anchors(doc) == {"a-title", "jobsched-worker-the-first-one", "a-title-1"}


@pytest.mark.parametrize("doc", [pytest.param(d, id=str(d.relative_to(ROOT))) for d in DOCS])
def test_relative_links_resolve(doc: Path) -> None:
    """Each relative link names an existing path and, in a Markdown file, a heading of it."""
    broken = []
    for n, target in links(doc):
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            broken.append(f"{doc.name}:{n}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{doc.name}:{n}: {target} (no such heading)")
    assert broken == []
