"""Packaging: every third-party import of the package is a declared dependency (or, for an
optional extra, imported through :func:`icda.errors.import_extra`, which names the extra when it
is missing), pyproject.toml gives ranges while constraints.txt pins the tested versions that
scripts/install.sh and the conda environment install, and the package keeps its layers (the
import-linter contracts of pyproject.toml)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    """Normalised distribution name of a requirement (PEP 503: lower case, runs of -_. → -)."""
    return re.sub(r"[-_.]+", "-", re.split(r"[<>=!~\[ ;@]", requirement, maxsplit=1)[0]).lower()


PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
#: the extras scripts/install.sh (and so CI) installs: what the tests need
INSTALLED_EXTRAS = ("test", "llm", "slurm")


def _declared() -> set[str]:
    return {_name(r) for r in PROJECT["dependencies"]}


def _constraints() -> dict[str, str]:
    """constraints.txt: normalised name → pinned version (every line ``name==version``)."""
    pins = {}
    for number, line in enumerate((REPO / "constraints.txt").read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep and version, f"constraints.txt:{number}: {line!r} is not name==version"
            pins[_name(name)] = version.strip()
    return pins


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


def test_optional_extras_are_imported_through_import_extra():
    """A module of an optional extra (openai: ``llm``) is never imported by an import statement
    (it would fail with a bare ImportError where the extra is not installed): every use goes
    through ``import_extra(module, extra, ...)``, whose extra exists in pyproject.toml and holds
    the module's distribution."""
    extras = PROJECT["optional-dependencies"]
    optional = {"openai": "llm"}  # module → extra
    imported = _imports(REPO / "icda")
    assert not optional.keys() & imported.keys(), (
        f"import these through icda.errors.import_extra: {sorted(optional.keys() & imported.keys())}")
    calls = set()
    for path in sorted((REPO / "icda").rglob("*.py")):
        calls |= set(re.findall(r"import_extra\(\s*\"(\w+)\",\s*\"(\w+)\"", path.read_text(encoding="utf-8")))
    assert ("openai", "llm") in calls
    for module, extra in calls:
        assert optional.get(module) == extra, f"import_extra({module!r}, {extra!r}): add it to `optional`"
        assert _name(module) in {_name(r) for r in extras[extra]}, f"pyproject.toml: extra {extra} lacks {module}"


def test_a_missing_extra_names_the_extra_to_install(monkeypatch):
    from icda.data.llm_spec import Backend
    from icda.errors import ConfigError
    from icda.generate.backends import OpenAIBackend

    monkeypatch.setitem(sys.modules, "openai", None)  # import openai → ImportError
    with pytest.raises(ConfigError) as caught:
        OpenAIBackend(Backend(type="openai", base_url="http://127.0.0.1:9/v1", model="m"))
    message = str(caught.value)
    assert "llm.backend.type: openai needs the Python package 'openai'" in message
    assert "pip install 'icda[llm]'" in message


def test_the_package_gives_ranges_and_constraints_pin_the_tested_versions():
    """pyproject.toml's dependencies and extras are ranges (no ``==``: the package installs beside
    other research code); constraints.txt pins every dependency and every extra that
    scripts/install.sh installs, each pin inside the package's range, and the fixed kernel path's
    torch 2.13.0 and numpy 2.4.6."""
    requirements = [Requirement(r) for r in PROJECT["dependencies"]]
    for extra in INSTALLED_EXTRAS:
        requirements += [Requirement(r) for r in PROJECT["optional-dependencies"][extra]]
    pinned = [str(r) for r in requirements if any(s.operator in ("==", "===") for s in r.specifier)]
    assert not pinned, f"pyproject.toml: give ranges, and put exact versions in constraints.txt: {pinned}"
    pins = _constraints()
    assert pins["torch"] == "2.13.0" and pins["numpy"] == "2.4.6"
    missing = sorted(_name(r.name) for r in requirements if _name(r.name) not in pins)
    assert not missing, f"constraints.txt: pin the tested versions of {missing}"
    outside = [f"{r} (pinned {pins[_name(r.name)]})" for r in requirements
               if not r.specifier.contains(pins[_name(r.name)], prereleases=True)]
    assert not outside, f"constraints.txt pins a version pyproject.toml's range refuses: {outside}"


def test_install_script_and_ci_use_the_constraints():
    install = (REPO / "scripts/install.sh").read_text()
    torch_line, package_line = (line for line in install.splitlines() if "pip install" in line and "-c constraints.txt" in line)
    assert torch_line.rstrip().endswith(" torch")  # torch first, from the constraints: 2.13.0's CPU build
    assert f"-e '.[{','.join(INSTALLED_EXTRAS)}]'" in package_line
    assert "bash scripts/install.sh" in (REPO / ".ci/run").read_text()


def test_conda_environment_lists_the_constrained_versions():
    """environment.yml's pip list is constraints.txt, line for line (it cannot read the file:
    ``snakemake --use-conda`` copies it under .snakemake/conda/)."""
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    listed = {}
    for line in pip:
        name, sep, version = line.partition("==")
        assert sep, f"environment.yml: {line!r}: pin it as in constraints.txt (name==version)"
        listed[_name(name)] = version
    pins = _constraints()
    assert listed == pins, (
        "environment.yml's pip list and constraints.txt differ: "
        f"{sorted(set(listed.items()) ^ set(pins.items()))}")
    post_deploy = (REPO / "environment.post-deploy.sh").read_text()
    assert "pip install --no-deps -e ." in post_deploy  # the project itself


def test_the_package_keeps_its_layers():
    """``lint-imports``: the import-linter contracts of pyproject.toml hold (records and settings at
    the bottom, the algorithm, the steps, the CLI and workflow configuration on top; the sentence
    is in icda/__init__.py). Function-local imports count."""
    code = "import sys\nfrom importlinter.cli import lint_imports\nsys.exit(lint_imports(no_cache=True))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_release_is_named_the_same_everywhere():
    """pyproject.toml's version is icda.__version__, CITATION.cff's version (with the release
    date) and the CHANGELOG's newest release heading (``## [0.3.0] - 2026-11-28``; an
    ``## [Unreleased]`` section above it, Keep a Changelog's, holds what comes next)."""
    import icda

    version = PROJECT["version"]
    assert icda.__version__ == version
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert str(citation["version"]) == version
    heading = re.search(r"^## (?!\[Unreleased\]$)(.+)$", (REPO / "CHANGELOG.md").read_text(), re.M).group(1)
    assert heading == f"[{version}] - {citation['date-released']}", f"CHANGELOG.md's newest release: {heading}"
    paper = citation["preferred-citation"]
    assert paper["doi"] == "10.1609/aaai.v39i19.34195" and (paper["start"], paper["end"]) == (19931, 19938)
