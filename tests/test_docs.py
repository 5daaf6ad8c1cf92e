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
