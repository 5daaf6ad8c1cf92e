"""The project's own documentation: the architecture table covers every rule and names real
modules, links between documents resolve, and no file cites a document outside the project."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from icda.cli import COMMANDS

REPO = Path(__file__).resolve().parents[1]
ARCHITECTURE = (REPO / "docs/architecture.md").read_text(encoding="utf-8")


def _tracked(pattern: str = "*") -> list[Path]:
    """The project's files matching ``pattern`` (git's view; outside a checkout, every file but
    the usual build and result folders)."""
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", pattern], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout
        return [REPO / line for line in out.splitlines() if (REPO / line).is_file()]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".venv", "results", ".snakemake", "__pycache__", ".pytest_cache"}
        return [p for p in REPO.rglob(pattern)
                if p.is_file() and not skip & set(p.relative_to(REPO).parts)]


def test_architecture_table_lists_every_rule_and_command():
    rules = set()
    for smk in sorted((REPO / "workflow/rules").glob("*.smk")):
        rules |= set(re.findall(r"^(?:rule|checkpoint) (\w+):", smk.read_text(), re.M))
    missing = sorted(r for r in rules if f"`{r}`" not in ARCHITECTURE)
    assert not missing, f"docs/architecture.md: add the rules {missing} to the table"
    commands = [c.replace("_", "-") for c in COMMANDS]
    missing = [c for c in commands if f"python -m icda {c}" not in ARCHITECTURE]
    assert not missing, f"docs/architecture.md: add the commands {missing} to the table"


def test_architecture_names_only_existing_modules():
    names = set(re.findall(r"`([\w/]+\.(?:py|html))`", ARCHITECTURE))
    missing = sorted(n for n in names if not ((REPO / "icda" / n).exists() or (REPO / n).exists()))
    assert names and not missing, f"docs/architecture.md names modules that do not exist: {missing}"


def test_relative_links_between_documents_resolve():
    broken = []
    for md in _tracked("*.md"):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", md.read_text(encoding="utf-8")):
            if "://" not in target and not (md.parent / target).exists():
                broken.append(f"{md.relative_to(REPO)} → {target}")
    assert not broken, f"broken links: {broken}"


def test_no_file_cites_a_document_outside_the_project():
    outside = ("DESIGN.md", "shared/paper", "icda-aaai25.tex")
    hits = [f"{path.relative_to(REPO)}: {word}" for path in _tracked()
            if path.suffix in {".py", ".md", ".smk", ".yaml", ".yml", ".rst", ".toml", ".sh", ""}
            and path.name != "test_docs.py"
            for word in outside if word in path.read_text(encoding="utf-8", errors="replace")]
    assert not hits, f"cite the project's docs/ instead: {hits}"


# -- every relative link and #anchor of the documentation resolves (GitHub's rules) -------------

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")


def _without_code(text: str) -> str:
    """``text`` with fenced code blocks and code spans blanked (their brackets are not links)."""
    text = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return _CODE_SPAN.sub("", text)


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: its rendered text (no code ticks, emphasis or link
    targets) lowercased, every character but letters, digits, ``_``, ``-`` and spaces dropped,
    spaces made ``-`` (a repeated anchor gets ``-1``, ``-2``, ...: :func:`anchors`)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link shows its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "")
    text = re.sub(r"(\*+|\b_+|_+\b)(?=\S)(.+?)(?<=\S)\1", r"\2", text)  # **bold**, *em*, _em_
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """Every anchor a Markdown file has: its ATX headings' (GitHub's rules, repeats numbered) and
    explicit ``<a name=...>``/``id=...`` ones."""
    found, seen = set(), {}
    for heading in re.findall(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", _FENCE.sub("", markdown), re.M):
        slug = github_anchor(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    found |= set(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", markdown))
    return found


def test_github_anchor_rules():
    assert github_anchor("Whole sentences for the frozen encoder: `max_tokens` 32 → 128 (dev; the rule "
                         "written before the run)") == \
        "whole-sentences-for-the-frozen-encoder-max_tokens-32--128-dev-the-rule-written-before-the-run"
    assert github_anchor("The **bold** [link](x.md) and _em_ — done!") == "the-bold-link-and-em--done"
    assert anchors("# A\n\n## A\n\n```\n# not a heading\n```\n### A\n") == {"a", "a-1", "a-2"}


def test_documentation_links_and_anchors_resolve():
    """Every relative link of README.md and docs/**/*.md points to a file or folder that exists,
    and every #anchor (in the same file or in another Markdown file) to one of its headings."""
    docs = [REPO / "README.md"] + sorted(p for p in _tracked("*.md") if p.is_relative_to(REPO / "docs"))
    cache: dict[Path, set[str]] = {}
    broken = []
    for md in docs:
        for target in _LINK.findall(_without_code(md.read_text(encoding="utf-8"))):
            if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # a URL or mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (md.parent / path).resolve() if path else md
            where = f"{md.relative_to(REPO)} → {target}"
            if not dest.exists():
                broken.append(f"{where}: no such file")
            elif anchor and dest.suffix == ".md":
                if dest not in cache:
                    cache[dest] = anchors(dest.read_text(encoding="utf-8"))
                if anchor not in cache[dest]:
                    broken.append(f"{where}: no heading with this anchor")
    assert not broken, "broken links:\n" + "\n".join(broken)
