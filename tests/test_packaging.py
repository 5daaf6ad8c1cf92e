"""Packaging: every third-party import of the package is a declared dependency, the conda
environment lists the same dependencies as pyproject.toml, and the package keeps its layers (the
import-linter contracts of pyproject.toml)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    """Normalised distribution name of a requirement (PEP 503: lower case, runs of -_. → -)."""
    return re.sub(r"[-_.]+", "-", re.split(r"[<>=!~\[ ;@]", requirement, maxsplit=1)[0]).lower()


def _declared() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return {_name(r) for r in project["dependencies"]}


def _imports(root: Path) -> dict[str, str]:
    """Top-level module → first file importing it, for every absolute import under ``root``."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(REPO)))
    return found


def test_every_third_party_import_is_declared():
    dists = packages_distributions()
    declared = _declared()
    missing = []
    for module, where in _imports(REPO / "icda").items():
        if module in sys.stdlib_module_names or module == "icda":
            continue
        names = {_name(d) for d in dists.get(module, [module])}
        if not names & declared:
            missing.append(f"{module} (imported in {where}; distribution {sorted(names)})")
    assert not missing, ("add to [project] dependencies of pyproject.toml: " + ", ".join(missing))


def test_conda_environment_lists_the_declared_dependencies():
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    listed = {_name(r) for r in pip}
    tests = {_name(r) for r in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
             ["optional-dependencies"]["test"]}
    assert listed - tests == _declared(), (
        "environment.yml's pip list and pyproject.toml's dependencies differ: "
        f"only in environment.yml {sorted(listed - tests - _declared())}, "
        f"only in pyproject.toml {sorted(_declared() - listed)}")
    post_deploy = (REPO / "environment.post-deploy.sh").read_text()
    assert "pip install --no-deps -e ." in post_deploy  # the project itself


def test_the_package_keeps_its_layers():
    """``lint-imports``: the import-linter contracts of pyproject.toml hold (records and settings at
    the bottom, the algorithm, the steps, the CLI and workflow configuration on top; the sentence
    is in icda/__init__.py). Function-local imports count."""
    code = "import sys\nfrom importlinter.cli import lint_imports\nsys.exit(lint_imports(no_cache=True))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
