"""How the loop's counterfactuals sit against the training split's rationale annotations (ERASER's
movies: the evidence sentences of every training review), per run and iteration of a
robustness.py folder: the share of swapped-out sentences that are evidence of the source's label,
of inserted sentences that are evidence of the donor's label, and of counterfactuals that keep
at least one evidence sentence of their old label (whose new label the rest of the document then
contradicts). docs/experiments/own-data.md, "ERASER's movie reviews".

    PYTHONPATH=. .venv/bin/python benchmarks/counterfactual_evidence.py ../bench/movies/fixed/results/movies
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from icda.data.document import read_split
from icda.guard import add_input, parse_arguments
from icda.io import read_jsonl
from icda.layout import augmented_path


def iteration_row(augmented: Path, evidence: dict[str, frozenset[int]]) -> dict:
    """One iteration's augmented training split against the ``evidence`` ({document id: its
    annotated sentence indices}) of the original training documents."""
    records = read_jsonl(augmented, lambda obj: obj, "an augmented training split", "rerun `python -m icda augment`")
    cfs = [r for r in records if r.get("counterfactual")]
    if not cfs:
        return {"counterfactuals": 0}
    unknown = sorted(({r["source"] for r in cfs} | {d for r in cfs for d, _ in r["inserted_from"]}) - set(evidence))
    if unknown:
        raise SystemExit(f"counterfactual_evidence: {augmented}: documents {unknown[:3]} are not in the training "
                         "split. Fix: give the dataset folder these runs were trained on")
    share = lambda hits: sum(hits) / len(cfs)
    return {
        "counterfactuals": len(cfs),
        "swapped_out_evidence": share(all(p in evidence[r["source"]] for p in r["swapped"]) for r in cfs),
        "inserted_evidence": share(all(p in evidence[d] for d, p in r["inserted_from"]) for r in cfs),
        "old_evidence_kept": share(bool(evidence[r["source"]] - set(r["swapped"])) for r in cfs),
        "evidence_per_source": sum(len(evidence[r["source"]]) for r in cfs) / len(cfs),
    }


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_input(parser, "dataset", kind="tree", help="a robustness run's <path>/results/<dataset> folder")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(build_parser(), argv)
    train = read_split(args.dataset / "data", "train")
    if any(d.rationale is None for d in train):
        print(f"counterfactual_evidence: {args.dataset}/data/train.jsonl has documents without a rationale "
              "annotation. Fix: give a dataset whose training split is annotated (ERASER's movies)", file=sys.stderr)
        return 1
    evidence = {d.id: d.rationale for d in train}
    rows = []
    for run in sorted(args.dataset.glob("run*"), key=lambda p: int(p.name[3:])):
        for it in sorted(run.glob("iter*"), key=lambda p: int(p.name[4:])):
            if augmented_path(it, "train").exists():
                r = iteration_row(augmented_path(it, "train"), evidence)
                if r["counterfactuals"]:
                    rows.append(f"| {run.name} | {it.name[4:]} | {r['counterfactuals']} | {r['swapped_out_evidence']:.0%} | "
                                f"{r['inserted_evidence']:.0%} | {r['old_evidence_kept']:.0%} | {r['evidence_per_source']:.1f} |")
    if not rows:
        print(f"counterfactual_evidence: {args.dataset}: no run<r>/iter<k>/augmented/train.jsonl holds a "
              "counterfactual. Fix: give a robustness run's <path>/results/<dataset> folder", file=sys.stderr)
        return 1
    print("| run | iteration | counterfactuals | swapped-out sentence is evidence | inserted sentence is evidence | "
          "old label's evidence kept | evidence sentences a source |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
