"""The documentation is self-contained: its links resolve and the code's citations of it hold."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MATH = ROOT / "docs" / "math.md"
# Spelled in two pieces so that this file does not name the files it forbids.
FORBIDDEN = tuple(name.encode() for name in ("MATH" + ".md", "STACK" + ".md"))
SKIPPED_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
CITATION = "docs/math.md, "
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _repo_files() -> list[Path]:
    """Every file of the repository: git's list, or a walk when git is not available."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
        ).stdout
        files = [ROOT / name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.SubprocessError):
        files = []
    if not files:
        files = [
            path
            for path in ROOT.rglob("*")
            if path.is_file() and not SKIPPED_DIRS & set(path.relative_to(ROOT).parts)
        ]
    return [path for path in files if path.is_file()]


def _headings(path: Path) -> list[str]:
    return [
        line.lstrip("#").strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.match(r"#{1,6} ", line)
    ]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.lower())
    return text.replace(" ", "-")


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_no_file_cites_reference_notes_outside_the_repository() -> None:
    offenders = []
    for path in _repo_files():
        if path.stat().st_size > 5_000_000:
            continue
        data = path.read_bytes()
        offenders.extend(
            f"{path.relative_to(ROOT)}: {name.decode()}" for name in FORBIDDEN if name in data
        )
    assert offenders == []


def test_math_md_has_the_sections_the_code_cites() -> None:
    headings = set(_headings(MATH))
    for section in (
        "Metrics",
        "Floors",
        "Floors under deduplication",
        "Inversion",
        "Check 1",
        "Check 2",
        "Intervals",
        "Power",
        "Ties",
    ):
        assert section in headings, section


def _citations() -> list[tuple[str, str]]:
    """(file, text after "docs/math.md, ") for every citation in code, comments joined up."""
    found = []
    for path in _repo_files():
        if path.suffix != ".py" or path.resolve() == Path(__file__).resolve():
            continue  # this file quotes citations to test the matcher
        text = path.read_text(encoding="utf-8")
        # A citation may wrap onto the next line of a docstring or a comment.
        flat = re.sub(r"\s*\n\s*(?:#\s*)?", " ", text)
        start = 0
        while (i := flat.find(CITATION, start)) >= 0:
            found.append((str(path.relative_to(ROOT)), flat[i + len(CITATION) : i + 80]))
            start = i + 1
    return found


def _named_heading(text: str, headings: list[str]) -> str | None:
    """The longest heading that ``text`` starts with as whole words, or None."""
    for heading in sorted(headings, key=len, reverse=True):
        if text.startswith(heading) and not text[len(heading) : len(heading) + 1].isalnum():
            return heading
    return None


def test_every_citation_of_math_md_names_one_of_its_headings() -> None:
    headings = _headings(MATH)
    citations = _citations()
    assert len(citations) >= 5, "the code cites docs/math.md by section"
    bad = [
        f"{where}: docs/math.md, {text[:40]}"
        for where, text in citations
        if _named_heading(text, headings) is None
    ]
    assert bad == []


def test_a_citation_of_a_missing_section_is_caught() -> None:
    headings = _headings(MATH)
    assert _named_heading("Floors under deduplication). The", headings) == (
        "Floors under deduplication"
    )
    assert _named_heading("Check 1.", headings) == "Check 1"
    assert _named_heading("Check 3.", headings) is None
    assert _named_heading("Flors, the floor", headings) is None
    assert _named_heading("Floorsy", headings) is None


@pytest.mark.parametrize("document", _documents(), ids=lambda p: p.name)
def test_relative_links_resolve(document: Path) -> None:
    broken = []
    for target in LINK.findall(document.read_text(encoding="utf-8")):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        path = (document.parent / path_part).resolve() if path_part else document
        if not path.exists():
            broken.append(target)
            continue
        if anchor and path.suffix == ".md":
            if anchor not in {_slug(h) for h in _headings(path)}:
                broken.append(target)
    assert broken == []
