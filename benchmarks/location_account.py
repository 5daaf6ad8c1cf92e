"""Where location's points go: what ICDA's selector picks instead of the annotated sentence, and
what its counterfactual pools hold. A diagnostic that chooses nothing.

Two proxies of "a location sentence", stated below: ``lex``, the location lexicon, and ``word``,
the word "location" alone. Read from finished runs' own files (``icda.layout``):

0. The proxies scored as sentence classifiers against the annotated test split (for location the
   even half): precision, recall, and each location term's own precision.
1. Per run and iteration, the chosen selector's test picks (``eval.json``; before the evaluate
   step ran, the chosen candidate's test predictions, the same positions): precision, the share
   of picks each proxy marks (beside the precision: how well a proxy measures a selector), and of
   the *wrong* picks the share that is the document's first / last / another sentence and the
   share of each lexicon class (one class per sentence: the first of ``CLASSES`` whose lexicon
   matches; ``none``: none matches), against every unannotated sentence as the base rate.
2. Per run and iteration, on the training documents (no annotation: a proxy is the ground
   truth): each class's pool A_c (``pools.json``), its size and proxy precision; the proxy
   precision of the sentences the counterfactuals swap out (the kept originals' rationale
   positions) and swap in (the augmented training file: one draw, training redraws every epoch
   from the same pools); the counterfactuals, the augmented set's share of label 1, and the share
   of counterfactuals still holding a marked sentence of their original; ``est. true``: the
   pool's proxy precision through the test picks' P(annotated | marked pick) and
   P(annotated | unmarked pick), which assumes train and test picks alike.

Restaurant (a ``results/restaurant*`` folder) is read with its keywords as its ground-truth rule
matches them: on its training documents the proxy *is* the ground truth.

    PYTHONPATH=. nice -n 19 .venv/bin/python benchmarks/location_account.py RESULTS/location [...] [--out FILE]

``RESULTS/<dataset>``: a Snakemake ``results/<dataset>`` folder; only runs with a ``summary.json``
(finished) are read unless ``--unfinished``. Markdown on stdout and in ``--out``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pandas as pd

from icda.data.document import read_split
from icda.io import read_jsonl
from icda.layout import (CHOICE_FILE, EVAL_FILE, POOLS_FILE, RUN_SUMMARY_FILE, augmented_path, iteration_dir,
                         predictions_path)
from icda.metrics import rationale_metrics
from icda.records import Choice, Evaluation, Pools, Predictions, RunSummary
from icda.guard import add_input, add_output, parse_arguments

# --------------------------------------------------------------------------- the lexicons
# Hotel lexicons: whole words or phrases, case-insensitive, each also with the endings -s, -es,
# -ed, -ing ("walk" matches "walks", "walking"; "view" does not match "review").
HOTEL = {
    "location": ["location", "located", "walk", "walking", "distance", "close to", "near", "nearby", "station",
                 "metro", "subway", "tube", "train", "bus", "airport", "downtown", "centre", "center",
                 "neighborhood", "neighbourhood", "area", "street", "square", "shops", "restaurants nearby", "view",
                 "beach", "block", "minutes"],
    "service": ["staff", "desk", "reception", "concierge", "service", "friendly", "helpful", "rude"],
    "room": ["room", "bed", "bathroom", "shower", "tv", "noise", "noisy", "quiet", "pool", "parking", "spa", "gym"],
    "clean": ["clean", "cleanliness", "dirty", "spotless"],
    "food": ["breakfast", "food", "restaurant", "coffee", "lunch", "dinner", "bar", "drinks"],
    "value": ["price", "value", "expensive", "cheap", "worth"],
    "overall": ["overall", "recommend", "would stay", "great hotel", "loved", "will return", "highly", "perfect",
                "excellent", "terrible", "worst", "best", "go back", "come back", "again", "stay here", "place to stay",
                "enjoyed", "great", "good", "nice", "lovely", "wonderful", "amazing", "fantastic", "awesome", "bad",
                "horrible", "awful", "disappointed"],
}
#: a sentence's class: the first of these whose lexicon matches it (location first, then the other
#: aspects, then overall sentiment, whose words aspect sentences often share: "the staff were
#: excellent"; ``overall`` is a sentiment sentence that names none of the aspects)
CLASSES = ("location", "service", "room", "clean", "food", "value", "overall")
#: restaurant's own keywords, matched as its ground-truth rule matches them (case-insensitive
#: substring, icda.data.readers.keyword_rationale)
RESTAURANT = ["food", "dish", "flavor", "delicious", "bland", "cook", "ingredients"]


def _words(terms: list[str]) -> re.Pattern:
    alternatives = "|".join(re.escape(t).replace(r"\ ", r"\s+") for t in terms)
    return re.compile(rf"\b(?:{alternatives})(?:s|es|ed|ing)?\b", re.IGNORECASE)


PATTERNS = {name: _words(terms) for name, terms in HOTEL.items()}
WORD = _words(["location"])
#: what a swapped-out sentence is (``swapped_out_rows``)
SWAPPED = ("word", "location-ish", "other aspect", "overall", "none")


def proxies(dataset: str) -> dict:
    """The proxy ground truths of a dataset's sentences, by name: restaurant's keyword rule, else
    the location lexicon (``lex``) and, stricter, the word "location" alone (``word``)."""
    if dataset.startswith("restaurant"):
        return {"lex": lambda s: any(k in s.lower() for k in RESTAURANT)}
    return {"lex": lambda s: PATTERNS["location"].search(s) is not None, "word": lambda s: WORD.search(s) is not None}


def sentence_class(sentence: str) -> str:
    return next((c for c in CLASSES if PATTERNS[c].search(sentence)), "none")


PLACES = ("first", "last", "other")


def place(position: int, size: int) -> str:
    return "first" if position == 0 else "last" if position == size - 1 else "other"


def pct(part, whole) -> float | None:
    return 100 * part / whole if whole else None


# --------------------------------------------------------------------------- 1. the test picks


def agreement(test, name: str, proxy) -> dict:
    """A proxy as a sentence classifier against the annotation of the test documents."""
    pairs = [(proxy(s), i in d.rationale) for d in test if d.rationale is not None for i, s in enumerate(d.sentences)]
    both, marked, true = sum(h and t for h, t in pairs), sum(h for h, _ in pairs), sum(t for _, t in pairs)
    first = [(d, next((i for i, s in enumerate(d.sentences) if proxy(s)), None))
             for d in test if d.rationale is not None]
    first = [(d, i) for d, i in first if i is not None]
    return {"proxy": name, "documents": len(test), "sentences": len(pairs), "annotated %": pct(true, len(pairs)),
            "marked %": pct(marked, len(pairs)), "precision": pct(both, marked), "recall": pct(both, true),
            "docs with a marked sentence %": pct(len(first), len(test)),
            "first marked sentence as the pick: precision": pct(sum(i in d.rationale for d, i in first), len(first))}


def term_precision(test) -> str:
    """Each location term alone: the test sentences it marks and the share of them annotated."""
    out = []
    for term in HOTEL["location"]:
        hits = [i in d.rationale for d in test if d.rationale is not None for i, s in enumerate(d.sentences)
                if _words([term]).search(s)]
        out.append((len(hits), f"{term} {len(hits)} ({'-' if not hits else f'{pct(sum(hits), len(hits)):.0f} %'})"))
    return "; ".join(text for _, text in sorted(out, key=lambda x: -x[0]))


def finished_runs(results: Path, unfinished: bool) -> list[tuple[Path, RunSummary | None]]:
    runs = sorted(results.glob("run[0-9]*"), key=lambda p: int(p.name[3:]))
    return [(run, RunSummary.read(run / RUN_SUMMARY_FILE) if (run / RUN_SUMMARY_FILE).exists() else None)
            for run in runs if unfinished or (run / RUN_SUMMARY_FILE).exists()]


def iterations(run: Path):
    k = 0
    while (it := iteration_dir(run, k)).exists():
        yield k, it
        k += 1


def shares(items, key, names) -> dict:
    """{name: % of ``items`` whose ``key`` is name}."""
    keys = [key(x) for x in items]
    return {n: pct(keys.count(n), len(keys)) for n in names}


def test_rows(run, summary, test, marks, hotel) -> tuple[list[dict], list[tuple[dict, bool]]]:
    """Part 1 per iteration of a run; also every test pick as ({proxy: marked}, annotated)."""
    by_id = {d.id: d for d in test}
    rows, picks = [], []
    for k, it in iterations(run):
        if (it / EVAL_FILE).exists():
            ev = Evaluation.read(it / EVAL_FILE)
            docs, positions = [by_id[i] for i in ev.documents["ids"]], ev.positions(it / EVAL_FILE)
        elif (it / CHOICE_FILE).exists():  # not evaluated yet: the chosen candidate's test predictions
            cand = Path(Choice.read(it / CHOICE_FILE).chosen.candidate_dir)
            cand = cand if cand.is_absolute() else run.parents[2] / cand  # relative to the Snakemake folder
            docs, positions = test, Predictions.read(predictions_path(cand)).test.positions
        else:
            continue
        m = rationale_metrics(positions, [d.rationale for d in docs], [len(d.sentences) for d in docs])
        picked = [(d, p) for d, ps in zip(docs, positions) if d.rationale is not None for p in ps]
        wrong = [(d, p) for d, p in picked if p not in d.rationale]
        picks += [({n: mk[d.id][p] for n, mk in marks.items()}, p in d.rationale) for d, p in picked]
        row = {"run": run.name, "k": k, "ICDA": summary is not None and summary.icda_iteration == k,
               "precision": 100 * m["precision"]}
        row |= {f"marked ({n})": pct(sum(mk[d.id][p] for d, p in picked), len(picked)) for n, mk in marks.items()}
        row |= {"wrong n": len(wrong)} | shares(wrong, lambda x: place(x[1], len(x[0].sentences)), PLACES)
        if hotel:
            row |= shares(wrong, lambda x: sentence_class(x[0].sentences[x[1]]), (*CLASSES, "none"))
        rows.append(row)
    return rows, picks


def unannotated(test, hotel) -> dict:
    """What a wrong pick drawn at random would be: every unannotated test sentence."""
    sents = [(d, i) for d in test if d.rationale is not None for i in range(len(d.sentences)) if i not in d.rationale]
    row = {"k": "every unannotated sentence", "wrong n": len(sents)}
    row |= shares(sents, lambda x: place(x[1], len(x[0].sentences)), PLACES)
    if hotel:
        row |= shares(sents, lambda x: sentence_class(x[0].sentences[x[1]]), (*CLASSES, "none"))
    return row


# --------------------------------------------------------------------------- 2. the pools


def pool_rows(run, train, marks) -> list[dict]:
    """Part 2 per iteration with a pools.json and per proxy: the pools, the sentences swapped out
    (the kept originals' rationale positions) and swapped in (the augmented training file)."""
    docs = {d.id: d for d in train}
    ids = [d.id for d in train]
    rows = []
    for k, it in iterations(run):
        if not (it / POOLS_FILE).exists():
            continue
        plan = Pools.read(it / POOLS_FILE).train.plan
        pools = {c: [(ids[d], p) for d, p in refs] for c, refs in sorted(plan.pools.items())}
        out = [(ids[d], p) for d, ps in zip(plan.kept, plan.positions) for p in ps]
        aug = augmented_path(it, "train")
        records = read_jsonl(aug, dict, "an augmented document", "rerun the augment step") if aug.exists() else []
        cfs = [r for r in records if r.get("counterfactual")]
        ins = [(doc, p) for r in cfs for doc, p in r["inserted_from"]]
        common = {"run": run.name, "k": k} | {f"pool{c} n": len(refs) for c, refs in pools.items()}
        common["pool first/last"] = pct(sum(p in (0, len(docs[d].sentences) - 1) for rs in pools.values()
                                            for d, p in rs), sum(map(len, pools.values())))
        common |= {"cf": len(cfs), "label 1 %": pct(sum(r["label"] == 1 for r in records), len(records))}
        for name, mk in marks.items():
            row = common | {"proxy": name}
            row |= {f"pool{c}": pct(sum(mk[d][p] for d, p in refs), len(refs)) for c, refs in pools.items()}
            row["pool"] = pct(sum(mk[d][p] for rs in pools.values() for d, p in rs), sum(map(len, pools.values())))
            row["out"] = pct(sum(mk[d][p] for d, p in out), len(out))
            row["in"] = pct(sum(mk[d][p] for d, p in ins), len(ins)) if ins else None
            row["cf keeps marked"] = pct(sum(any(mk[r["source"]][i] for i in range(len(docs[r["source"]].sentences))
                                                 if i not in r["swapped"]) for r in cfs), len(cfs)) if cfs else None
            rows.append(row)
    return rows


def swapped_out_rows(run, train) -> list[dict]:
    """Per iteration with a pools.json: what the counterfactuals swap out on the training
    documents, % of the swapped-out sentences: the word "location", else a sentence's class."""
    rows = []
    for k, it in iterations(run):
        if (it / POOLS_FILE).exists():
            plan = Pools.read(it / POOLS_FILE).train.plan
            out = [train[d].sentences[p] for d, ps in zip(plan.kept, plan.positions) for p in ps]
            kinds = ["word" if WORD.search(s) else "location-ish" if sentence_class(s) == "location" else
                     sentence_class(s) if sentence_class(s) in ("overall", "none") else "other aspect" for s in out]
            rows.append({"run": run.name, "k": k} | shares(kinds, lambda x: x, SWAPPED))
    return rows


# --------------------------------------------------------------------------- the report


def md(df: pd.DataFrame) -> str:
    counts = {c: df[c].map(lambda v: "" if pd.isna(v) else f"{v:g}" if isinstance(v, float) else str(v))
              for c in ("k", "runs") if c in df}
    df = df.assign(**counts)
    return df.astype(object).where(df.notna(), None).to_markdown(index=False, floatfmt=".1f", missingval="")


def mean_by(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Mean over runs per ``keys`` (``runs``: how many runs reached it)."""
    g = df.drop(columns=[c for c in ("run", "ICDA") if c in df]).groupby(keys, sort=False)
    return g.mean(numeric_only=True).reset_index().assign(runs=g.size().values)


def read_folder(results: Path, unfinished: bool) -> dict:
    dataset, data = results.name, results / "data"
    setting = f"{results.parents[2].name}/{dataset}" if len(results.parents) > 2 else dataset
    fns, hotel = proxies(dataset), not dataset.startswith("restaurant")
    test, train = read_split(data, "test"), read_split(data, "train")
    mark = lambda docs: {n: {d.id: [f(s) for s in d.sentences] for d in docs} for n, f in fns.items()}  # noqa: E731
    test_marks, train_marks = mark(test), mark(train)
    runs = finished_runs(results, unfinished)
    tests, picks, pools, swapped = [], [], [], []
    for run, summary in runs:
        rows, p = test_rows(run, summary, test, test_marks, hotel)
        tests += rows
        picks += p
        pools += pool_rows(run, train, train_marks)
        swapped += swapped_out_rows(run, train) if hotel else []
    notes = [f"runs read: {', '.join(r.name + ('' if s else ' (unfinished)') for r, s in runs) or 'none'}"]
    for name, mk in train_marks.items():
        flat = [x for v in mk.values() for x in v]
        notes.append(f"training documents, proxy {name}: {pct(sum(flat), len(flat)):.1f} % of {len(flat)} sentences "
                     f"marked; {pct(sum(map(any, mk.values())), len(mk)):.1f} % of {len(mk)} documents hold one")
    if any(d.rationale is not None for d in train):  # restaurant: the keyword ground truth of train
        flat = [(i in d.rationale) == m for d in train for i, m in enumerate(train_marks["lex"][d.id])]
        notes.append(f"proxy lex equals the train split's own ground truth on {pct(sum(flat), len(flat)):.1f} % "
                     "of its sentences")
    if hotel:
        notes.append(f"test sentences each location term marks (annotated %): {term_precision(test)}")
    return {"dataset": dataset, "setting": setting, "hotel": hotel, "notes": notes, "picks": picks,
            "agreement": pd.DataFrame([agreement(test, n, f) for n, f in fns.items()]),
            "unannotated": unannotated(test, hotel), "tests": pd.DataFrame(tests), "pools": pd.DataFrame(pools),
            "swapped": pd.DataFrame(swapped)}


def calibration(picks) -> dict:
    """Per proxy: (P(annotated | marked pick), P(annotated | unmarked pick)) over test picks."""
    out = {}
    for name in (picks[0][0] if picks else {}):
        hit = [t for mk, t in picks if mk[name]]
        miss = [t for mk, t in picks if not mk[name]]
        out[name] = (pct(sum(hit), len(hit)), pct(sum(miss), len(miss)), len(hit), len(miss))
    return out


def report(folders: list[Path], unfinished: bool) -> str:
    read = [read_folder(f, unfinished) for f in folders]
    out = ["## 0. The proxies against the test annotation",
           f"Lexicons (whole words, case-insensitive, also with -s/-es/-ed/-ing): "
           + "; ".join(f"**{c}**: {', '.join(HOTEL[c])}" for c in CLASSES)
           + ". A sentence's class is the first of location, service, room, clean, food, value, overall whose "
           "lexicon matches it. Proxy `lex`: the location lexicon; `word`: the word \"location\" alone. "
           f"Restaurant: its keywords ({', '.join(RESTAURANT)}) as substrings, its own ground-truth rule."]
    calib = {}
    for r in read:
        calib.setdefault(r["dataset"], []).extend(r["picks"])
    shown = set()
    for r in read:
        table = md(r["agreement"])
        out.append(f"### {r['setting']}\n\n" + "\n".join(f"- {n}" for n in r["notes"] if n not in shown)
                   + ("" if table in shown else "\n\n" + table))
        shown |= {table, *r["notes"][1:]}
    for dataset, picks in calib.items():
        calib[dataset] = calibration(picks)
        if picks:
            out.append(f"{dataset}, every test pick read: " + "; ".join(
                f"proxy {n}: P(annotated | marked pick) {a:.1f} % ({na}), P(annotated | unmarked pick) "
                f"{'-' if b is None else f'{b:.1f}'} % ({nb})"
                for n, (a, b, na, nb) in calib[dataset].items() if a is not None))

    out.append("## 1. What the chosen selector picks on the test documents\n\nMean over runs, %; `marked`: share of "
               "all picks a proxy marks; first/last/other and the classes: shares of the *wrong* picks; the last "
               "row: every unannotated sentence (what a wrong pick drawn at random would be).")
    for r in (r for r in read if not r["tests"].empty):
        table = pd.concat([mean_by(r["tests"], ["k"]), pd.DataFrame([r["unannotated"]])])
        corr = [f"{n}: r = {r['tests']['precision'].corr(r['tests'][f'marked ({n})']):.2f}, mean marked − precision "
                f"{(r['tests'][f'marked ({n})'] - r['tests']['precision']).mean():+.1f}"
                for n in proxies(r["dataset"]) if len(r["tests"]) > 2]
        icda = r["tests"][r["tests"]["ICDA"]]
        out.append(f"**{r['setting']}**\n\n" + md(table))
        if corr:
            out.append("A proxy as a measure of the selector, over every run and iteration (precision against the "
                       "share of picks it marks): " + "; ".join(corr) + ".")
        if not icda.empty:
            out.append(f"**{r['setting']}**, the iteration each run took as ICDA "
                       f"({', '.join(f'{a} k={b}' for a, b in zip(icda['run'], icda['k']))}):\n\n"
                       + md(mean_by(icda.drop(columns="k").assign(k="ICDA"), ["k"])))

    out.append("## 2. The pools on the training documents (proxy ground truth)\n\nIteration k's pools make the "
               "counterfactuals that train iteration k + 1. Mean over runs; `pool<c> n`: sentences in class c's "
               "pool; the rest %: `pool<c>`, `pool`: proxy precision of the pools; `out`: of the sentences the "
               "counterfactuals swap out; `in`: of those swapped in (the augmented train file's draw); `cf`: "
               "counterfactuals; `label 1 %` of the augmented set; `cf keeps marked`: counterfactuals still holding "
               "a marked sentence of their original; `est. true`: the pool's proxy precision through the test "
               "picks' rates above.")
    for r in (r for r in read if not r["pools"].empty):
        table = mean_by(r["pools"], ["proxy", "k"])
        rates = calib.get(r["dataset"], {})
        table["est. true"] = [None if rates.get(n, (None, None))[1] is None else
                              (rates[n][0] * x + rates[n][1] * (100 - x)) / 100
                              for n, x in zip(table["proxy"], table["pool"])]
        out.append(f"**{r['setting']}**\n\n" + md(table))
        if not r["swapped"].empty:
            out.append(f"**{r['setting']}**, what the counterfactuals swap out, % of the swapped-out sentences "
                       "(`word`: holds \"location\"; else its class: `location-ish` (the lexicon without the word), "
                       "`other aspect` (service, room, clean, food, value), `overall`, `none`):\n\n"
                       + md(mean_by(r["swapped"], ["k"])))

    out.append("## Per run")
    for r in read:
        if not r["tests"].empty:
            out.append(f"**{r['setting']}**, test picks\n\n" + md(r["tests"]))
        if not r["pools"].empty:
            out.append(f"**{r['setting']}**, pools\n\n" + md(r["pools"]))
    return "\n\n".join(out) + "\n"


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_input(parser, "results", kind="tree", nargs="+", help="results/<dataset> folders")
    parser.add_argument("--unfinished", action="store_true", help="also read runs without a summary.json")
    add_output(parser, "--out", help="also write the report here")
    return parser


def main(argv=None) -> None:
    args = parse_arguments(build_parser(), argv)
    text = "# Where location's points go (benchmarks/location_account.py)\n\n" + report(args.results, args.unfinished)
    sys.stdout.write(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
