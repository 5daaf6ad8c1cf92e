"""A toy dataset in the ICDA format and the Snakemake arguments that run the workflow on it
(with the tiny config), for the tests that run or dry-run the workflow."""

from __future__ import annotations

from pathlib import Path

import yaml

from test_workflow import REPO


def toy_files(data_dir: Path, test_lines: list[str] | None = None) -> None:
    """A small dataset in the ICDA format: 20 balanced train and 10 dev documents of 5 sentences,
    and a test file whose first sentences mention the keyword "food"."""
    (data_dir / "toy").mkdir(parents=True, exist_ok=True)

    def docs(prefix: str, n: int) -> str:
        return "".join(f"{i % 2}\tThe {prefix} food {i} was {'good' if i % 2 else 'bad'}."
                       f"[SEP]A{i}.[SEP]B{i}.[SEP]C{i}.[SEP]D{i}.\n" for i in range(n))

    (data_dir / "toy/train.txt").write_text(docs("train", 20), encoding="utf-8")
    (data_dir / "toy/dev.txt").write_text(docs("dev", 10), encoding="utf-8")
    if test_lines is None:
        test_lines = docs("test", 10).splitlines()
    (data_dir / "toy/test.txt").write_text("".join(f"{line}\n" for line in test_lines), encoding="utf-8")


TOY = {"train": "toy/train.txt", "dev": "toy/dev.txt", "test": "toy/test.txt", "keywords": ["food"]}


def workflow_args(workdir: Path, data_dir: Path, **config) -> list[str]:
    """Snakemake arguments: the default and tiny configs plus ``config`` (with the toy dataset)."""
    extra = workdir / "extra.yaml"
    extra.write_text(yaml.safe_dump({"data_dir": str(data_dir), "datasets": {"toy": TOY}} | config))
    return ["--cores", "1", "-s", str(REPO / "Snakefile"), "--directory", str(workdir), "--configfile",
            str(REPO / "config/config.yaml"), str(REPO / "tests/fixtures/tiny_workflow.yaml"), str(extra)]


def planned_jobs(proc) -> dict[str, int]:
    """The 'Job stats' table of a dry run: {rule: count}."""
    out = proc.stdout + proc.stderr
    if "Nothing to be done" in out:
        return {}
    table = out.split("Job stats:")[1].split("\n\n")[0].splitlines()[3:]
    return {rule: int(n) for rule, n in (line.split() for line in table) if rule != "total"}



def load_script(path: Path, key: str):
    """Import the script or benchmark at ``path`` as module ``key`` (once; its folder on sys.path
    while it loads, as when it runs)."""
    import importlib.util
    import sys

    if key in sys.modules:
        return sys.modules[key]
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(key, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module
