"""Every relative link in the Markdown docs points at a file that exists, and every `#anchor` at a
heading of that file (GitHub's rule: lower case, punctuation dropped, spaces to hyphens)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = sorted([ROOT / "README.md", *ROOT.glob("docs/*.md"), *ROOT.glob("models/**/*.md"),
                    *ROOT.glob("tests/**/README.md"), *ROOT.glob("examples/**/*.md")])
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def _without_code(text: str) -> str:
    """The text outside fenced blocks and inline code, where links are not links."""
    out: List[str] = []
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced and not line.startswith("    "):
            out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def github_anchor(heading: str) -> str:
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors_of(path: Path, cache: Dict[Path, Set[str]]) -> Set[str]:
    if path not in cache:
        seen: Dict[str, int] = {}
        found: Set[str] = set()
        for line in _without_code(path.read_text(encoding="utf-8")).splitlines():
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            base = github_anchor(m.group(1))
            n = seen.get(base, 0)
            found.add(base if n == 0 else f"{base}-{n}")
            seen[base] = n + 1
        cache[path] = found
    return cache[path]


def broken_links() -> List[Tuple[str, str]]:
    cache: Dict[Path, Set[str]] = {}
    broken: List[Tuple[str, str]] = []
    for doc in DOC_FILES:
        for target in LINK.findall(_without_code(doc.read_text(encoding="utf-8"))):
            if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = (doc.parent / file_part).resolve() if file_part else doc
            where = f"{doc.relative_to(ROOT)} -> {target}"
            if not dest.exists():
                broken.append((where, "no such file"))
            elif anchor and dest.suffix == ".md" and anchor not in anchors_of(dest, cache):
                broken.append((where, f"no heading with anchor '{anchor}'"))
    return broken


def test_anchor_rule_matches_github() -> None:
    assert github_anchor("Int8 (QDQ files from ONNX Runtime's quantize_static)") == \
        "int8-qdq-files-from-onnx-runtimes-quantize_static"
    assert github_anchor("Where `pointrt` goes, 2x") == "where-pointrt-goes-2x"


def test_every_relative_doc_link_resolves() -> None:
    if not DOC_FILES:
        pytest.fail("no Markdown files found")
    broken = broken_links()
    assert not broken, "broken links:\n" + "\n".join(f"  {w}: {why}" for w, why in broken)
