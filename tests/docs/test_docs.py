"""The README and docs/ stay what a reader can rely on: a README a newcomer reads in a few
minutes, links that lead somewhere, a command-line reference with every option of every
command (and none that is gone), and no issue numbers or load averages in the user guide."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

#: At most 15 KB: the README says what EvalDesk is, how to install it, the two commands, a
#: first run and where to go next; everything else is in docs/.
README_LIMIT = 15_000

#: The pages written for teachers and clinicians (docs/development.md and docs/benchmarks.md
#: are for developers; CHANGELOG.md is history).
USER_PAGES = ["README.md", "docs/aqer.md", "docs/majeval.md", "docs/interacteval.md",
              "docs/local-models.md", "docs/check-the-judge.md", "docs/cli.md",
              "docs/screenshots.md", "docs/agreement.md", "docs/privacy.md"]

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.MULTILINE)


def _pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]


def _prose(text: str) -> str:
    """The text without code blocks and code spans (a link written as code is not a link)."""
    return _CODE.sub("", _FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text without markup, in lower case, punctuation
    dropped, spaces made hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its words
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor GitHub makes for the headings of ``path`` (repeats get -1, -2, ...)."""
    seen: dict[str, int] = {}
    out = set()
    for _level, heading in _HEADING.findall(_FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(heading)
        n = seen.get(base, 0)
        out.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return out


def links(path: Path) -> list[str]:
    return _LINK.findall(_prose(path.read_text(encoding="utf-8")))


def test_the_readme_is_short():
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size:,} bytes; move detail into docs/"


def test_the_slug_is_githubs():
    assert slug("Repeat runs: does the judge give the same scores when asked again?") == \
        "repeat-runs-does-the-judge-give-the-same-scores-when-asked-again"
    assert slug("`evaldesk checklist score`") == "evaldesk-checklist-score"
    assert slug("MAJ-Eval: what it does where the paper is silent") == \
        "maj-eval-what-it-does-where-the-paper-is-silent"


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_an_anchor(page):
    broken = []
    for target in links(page):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (page.parent / file_part).resolve() if file_part else page
        if not linked.exists():
            broken.append(f"{target}: no file {linked}")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading with the anchor #{anchor} in {linked.name}")
    assert not broken, "\n".join(broken)


def test_a_broken_link_is_found(tmp_path):
    """The link test can fail: a missing file and a missing anchor are both reported."""
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n[gone](nothing.md) [here](#title) [not here](#nope) "
                    "`[code](x.md)`\n", encoding="utf-8")
    found = [t for t in links(page)]
    assert found == ["nothing.md", "#title", "#nope"]
    assert "title" in anchors(page) and "nope" not in anchors(page)


@pytest.mark.parametrize("name", USER_PAGES)
def test_no_issue_numbers_or_load_averages_in_the_user_guide(name):
    text = (ROOT / name).read_text(encoding="utf-8")
    assert not re.search(r"\bissues? \d+", text, re.IGNORECASE), \
        f"{name} names an issue: history goes to CHANGELOG.md"
    assert not re.search(r"\bload (average|of|at|about) ?[\d.]*|\(load \d", text, re.IGNORECASE), \
        f"{name} gives a load average: measurements go to docs/benchmarks.md"


def _commands() -> list[tuple[str, argparse.ArgumentParser]]:
    """Every runnable command ("aqer", "checklist score", ...) with its parser."""
    from core.cli import build_parser

    def walk(parser: argparse.ArgumentParser, path: list[str]):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            yield " ".join(path), parser
            return
        for name, sub in subs[0].choices.items():
            yield from walk(sub, [*path, name])

    return list(walk(build_parser(), []))


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {opt for action in parser._actions if action.help != argparse.SUPPRESS
            for opt in action.option_strings if opt.startswith("--") and opt != "--help"}


def _sections(path: Path) -> dict[str, str]:
    """The text under each heading of ``path`` (up to the next heading)."""
    text = path.read_text(encoding="utf-8")
    marks = list(_HEADING.finditer(text))
    return {m.group(2): text[m.end(): marks[i + 1].start() if i + 1 < len(marks) else len(text)]
            for i, m in enumerate(marks)}


def test_the_command_line_reference_lists_every_option_and_no_other():
    sections = _sections(DOCS / "cli.md")
    usage = _FENCE.search((DOCS / "cli.md").read_text(encoding="utf-8")).group(0)
    problems = []
    for command, parser in _commands():
        heading = f"`evaldesk {command}`"
        if heading not in sections:
            problems.append(f"no section {heading}")
            continue
        written = set(re.findall(r"`(--[a-z][a-z-]*)", sections[heading]))
        real = _options(parser)
        problems += [f"{heading}: {opt} is missing" for opt in sorted(real - written)]
        problems += [f"{heading}: {opt} does not exist" for opt in sorted(written - real)]
        line = re.search(rf"^evaldesk {command}\b.*?(?=^evaldesk |^#|\Z)", usage,
                         re.MULTILINE | re.DOTALL)
        if line is None:
            problems.append(f"evaldesk {command} is not in the commands at a glance")
            continue
        in_usage = set(re.findall(r"(--[a-z][a-z-]*)", line.group(0)))
        if re.search(r"(^|\s)-o ", line.group(0)):  # the short form stands for --output
            in_usage.add("--output")
        problems += [f"at a glance, evaldesk {command}: {opt} is missing"
                     for opt in sorted(real - in_usage)]
        problems += [f"at a glance, evaldesk {command}: {opt} does not exist"
                     for opt in sorted(in_usage - real)]
    assert not problems, "\n".join(problems)
