"""The documentation says what the code does and what was decided, not where it was discussed:
departure 10's formula is the one ``build_plan`` computes, the authors'-code departures are in
order, the ERASER format's reference names class names, and no file names a tracker number
("issue" and a number) that means nothing to a reader of the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np

from icda.counterfactual import build_plan

REPO = Path(__file__).resolve().parents[1]
DEPARTURES = (REPO / "docs/departures.md").read_text(encoding="utf-8")


def _row(label: str) -> str:
    return next(line for line in DEPARTURES.splitlines() if line.startswith(f"| {label} |"))


def test_departure_10_states_the_kept_originals_as_the_code_computes_them():
    """m = min(⌊N/(2C)⌋, correct in each class): 12 documents, 3 classes, every prediction right
    keep 2 per class (⌊12/6⌋), not the binary formula's ⌊12/4⌋ = 3."""
    assert "m = min(⌊N/(2C)⌋, correct in each class)" in _row("10")
    labels = np.repeat([0, 1, 2], 4)
    probabilities = np.eye(3)[labels] * 0.8 + 0.2 / 3
    _, stats = build_plan(labels, probabilities, [[0]] * 12)
    assert stats["m_per_class"] == 12 // (2 * 3) == 2
    _, binary = build_plan(np.repeat([0, 1], 6), np.repeat([0.1, 0.9], 6), [[0]] * 12)
    assert binary["m_per_class"] == 12 // 4 == 3  # binary: ⌊N/4⌋, the row's special case


def test_the_authors_code_departures_are_in_order():
    section = DEPARTURES.split("## From the authors' code", 1)[1]
    labels = re.findall(r"^\| ([A-Z]) \|", section, flags=re.M)
    assert labels == sorted(labels) and labels[:4] == ["A", "B", "C", "D"], labels


def test_the_eraser_format_reference_names_class_names():
    """config/README.md (generated from the schema) says ERASER's classification may be a name
    (NEG, POS) as the reader accepts, not only "0" … "C−1"."""
    row = next(line for line in (REPO / "config/README.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| `datasets.<name>.format` |"))
    assert "NEG" in row and "class_names" in row, row


def test_no_file_names_a_tracker_number():
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout.split()
    roots = ("docs/", "tests/", "icda/", "benchmarks/", "scripts/", "workflow/", "config/", "profiles/")
    files = [REPO / f for f in out if (f.startswith(roots) or "/" not in f) and (REPO / f).is_file()
             and Path(f).suffix in {".md", ".py", ".yaml", ".yml", ".smk", ".sh", ".rst", ".cff", ".toml"}]
    pattern = re.compile(r"\bissues? #?\d+\b", re.I)
    hits = [f"{f.relative_to(REPO)}:{n}: {m.group(0)}" for f in files
            for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
            for m in [pattern.search(line)] if m]
    assert not hits, ("say what was decided or tested instead of a tracker number: " + "; ".join(hits[:20]))


_BASH = re.compile(r"^```bash\n(.*?)^```", re.M | re.S)
#: where a command line writes: a redirection, --out, --directory
_WRITES = re.compile(r"(?:>>?|--out|--directory)\s+(\S+)")


def test_the_readme_examples_write_outside_the_clone_in_a_folder_of_their_own():
    """The smoke run and the predict examples of README.md and docs/outputs.md write only into a
    folder made by ``mktemp -d`` (per user, new each time): nothing into the clone's root, nothing
    into a fixed /tmp path another user may own. The workflow's own results/ is the exception."""
    for doc in ("README.md", "docs/outputs.md"):
        blocks = _BASH.findall((REPO / doc).read_text(encoding="utf-8"))
        assert blocks, doc
        text = "\n".join(blocks)
        temporary = set(re.findall(r"^(\w+)=\$\(mktemp -d\)", text, flags=re.M))
        assert "/tmp/" not in text, f"{doc}: a fixed /tmp path"
        for block in blocks:
            for target in _WRITES.findall(block):
                folder = re.fullmatch(r'"\$(\w+)(?:/[^"]*)?"', target)
                assert target.startswith("results/") or (folder and folder.group(1) in temporary), (
                    f"{doc}: {target!r} is written into the clone or a shared folder; use a folder "
                    "made by `mktemp -d`")
    readme = "\n".join(_BASH.findall((REPO / "README.md").read_text(encoding="utf-8")))
    assert '--directory "$smoke"' in readme and "predictions.jsonl" in readme


def test_contributing_names_real_files_functions_and_checks():
    """CONTRIBUTING.md: every file it names exists, every ``function`` it names in a module's
    sentence is defined there, the four places that list the data formats each hold every format
    of the spec, and the checks it asks for are commands that exist."""
    from icda.cli import COMMANDS
    from icda.data.dataset_spec import _CHOICES

    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:icda|workflow|tests|scripts|config|docs)/[\w/.<>-]+\.(?:py|yaml|smk|md|sh))`", text))
    missing = sorted(p for p in paths if "<" not in p and not (REPO / p).exists())
    assert paths and not missing, f"CONTRIBUTING.md names files that do not exist: {missing}"
    for module, names in [("icda/steps/prepare.py", ["read_splits"]), ("icda/data/readers.py", ["_lines"]),
                          ("icda/workflow_config/dataset_inputs.py", ["data_files"]),
                          ("icda/data/dataset_spec.py", ["_CHOICES"]), ("icda/report/tables.py", ["GROUP_DATA"])]:
        source = (REPO / module).read_text(encoding="utf-8")
        for name in names:
            assert f"`{name}`" in text and re.search(rf"^(?:def {name}\(|{name} = )", source, re.M), (module, name)
    formats = set(_CHOICES["format"]) | set(_CHOICES["test_format"])
    prepare = (REPO / "icda/steps/prepare.py").read_text(encoding="utf-8")
    schema = (REPO / "workflow/schemas/config.schema.yaml").read_text(encoding="utf-8")
    for fmt in formats - {"jsonl"}:  # jsonl is prepare's else branch
        assert f'fmt == "{fmt}"' in prepare, fmt
    for key in ("format", "test_format"):
        enum = re.search(rf"^\s+{key}: {{enum: \[([^\]]*)\]", schema, re.M).group(1)
        assert {v.strip() for v in enum.split(",")} == set(_CHOICES[key]), key
    assert "config_reference" in COMMANDS and "config-reference --check" in text
    assert "lint-imports" in text and "pytest -q" in text


def test_the_readme_headline_quotes_only_measured_numbers():
    """README's "What the defaults give today": it says the package is a re-implementation with
    documented departures and that config/paper.yaml has not been run; every number of its table
    and of the paragraph after it is written in the page it cites (docs/results.md,
    docs/experiments/loop-bound.md), apart from the two differences it computes from them; its
    figures exist."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    head = readme[:readme.index("## Run it")]
    assert "re-implementation of the paper's method" in head and "docs/departures.md" in head
    assert "`config/paper.yaml`" in head and "has not been run by this project" in head
    section = head[head.index("**What the defaults give today**"):head.index("![")]
    sources = "\n".join((REPO / p).read_text(encoding="utf-8")
                        for p in ("docs/results.md", "docs/experiments/loop-bound.md"))
    quoted = set(re.findall(r"(?<![\w.–-])\d+\.\d+(?:\s±\s\d+\.\d+)?", section))
    computed = {"30.0", "15.6"}  # 87.4 − 57.4 and 78.8 − 63.2, the ICDA differences to the paper
    assert round(87.4 - 57.4, 1) == 30.0 and round(78.8 - 63.2, 1) == 15.6
    missing = sorted(q for q in quoted - computed if q not in sources)
    assert len(quoted) > 15 and not missing, f"README quotes numbers its sources do not hold: {missing}"
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", head):
        assert (REPO / image).is_file(), image
