"""The rationale viewer (icda.report.viewer, ``python -m icda report viewer``).

The page is checked three ways: its HTML is well formed, the data it embeds holds every test
document with the selections of eval.json, and (when a Chromium is installed) a headless browser
renders it, a filter is clicked and the documents shown are checked.
"""

from __future__ import annotations

import html
import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from icda.cli import main
from icda.data.document import Document, write_documents
from icda.errors import DataError
from icda.report.viewer import PAGE_SIZE, outcome, write_viewer

# 60 test documents of 5 sentences, of which the model sees 4; ground truth: sentence (i % 4).
# MMI selects sentence 0 for all; ICDA selects the ground truth except on every 10th document,
# where it selects 3 - truth.
N_DOCS = 60


def _truth(i: int) -> int:
    return i % 4


def _icda(i: int) -> int:
    return 3 - _truth(i) if i % 10 == 0 else _truth(i)


def _expected_outcome(i: int) -> str:
    mmi_right, icda_right = _truth(i) == 0, _icda(i) == _truth(i)
    if icda_right and not mmi_right:
        return "fixed"
    if mmi_right and not icda_right:
        return "broke"
    return "both_wrong" if not (mmi_right or icda_right) else "same"


def _eval(path: Path, run: int, iteration: int, ids: list[str], selected: list[list[int]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "dataset": "toy", "run": run, "iteration": iteration, "precision": 0.5, "recall": 0.5,
        "f1": 0.5, "accuracy": None, "n_docs": len(ids),
        "documents": {"ids": ids, "positions": selected, "predicted": [1] * len(ids)}}))
    return path


@pytest.fixture
def toy(tmp_path: Path) -> dict:
    docs = [Document(f"test-{i}", i % 2, tuple(f"doc {i} sentence {k} <b>&amp;</b>" for k in range(5)),
                     frozenset({_truth(i)})) for i in range(N_DOCS)]
    test = tmp_path / "data/test.jsonl"
    write_documents(docs, test)
    ids = [d.id for d in docs]
    evals = [
        _eval(tmp_path / "run1/iter0/eval.json", 1, 0, ids, [[0]] * N_DOCS),
        _eval(tmp_path / "run1/iter1/eval.json", 1, 1, ids, [[1]] * N_DOCS),
        _eval(tmp_path / "run1/iter2/eval.json", 1, 2, ids, [[_icda(i)] for i in range(N_DOCS)]),
        # run 2: ICDA (iteration 1) equal to MMI: every document "same" or "both wrong"
        _eval(tmp_path / "run2/iter0/eval.json", 2, 0, ids, [[0]] * N_DOCS),
        _eval(tmp_path / "run2/iter1/eval.json", 2, 1, ids, [[0]] * N_DOCS),
    ]
    augmented = tmp_path / "icda_dataset.jsonl"
    records = [{"id": "train-1", "label": 1, "sentences": ["good food", "</script> <!-- loud"],
                "counterfactual": False, "source": "train-1", "swapped": [], "inserted_from": []},
               {"id": "train-1-cf", "label": 0, "sentences": ["bad food", "</script> <!-- loud"],
                "counterfactual": True, "source": "train-1", "swapped": [0],
                "inserted_from": [["train-7", 2]]}]
    augmented.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "rationales.html"
    data = write_viewer("toy", test, evals, augmented, out, max_sentences=4)
    return {"docs": docs, "evals": evals, "out": out, "data": data, "test": test,
            "augmented": augmented, "tmp": tmp_path}


class _Checker(HTMLParser):
    """Well-formedness: every non-void element closed in order; collects the embedded JSON."""

    VOID = {"meta", "link", "br", "hr", "img", "input"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.json_text: str | None = None
        self._in_data = False

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)
        self._in_data = tag == "script" and ("id", "viewer-data") in attrs

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> at {self.getpos()} closes {self.stack[-1:]}")
        else:
            self.stack.pop()
        self._in_data = False

    def handle_data(self, data):
        if self._in_data:
            self.json_text = (self.json_text or "") + data


def _parse(path: Path) -> _Checker:
    checker = _Checker()
    checker.feed(path.read_text(encoding="utf-8"))
    checker.close()
    return checker


def test_page_parses_and_embeds_every_document_with_its_selections(toy):
    checker = _parse(toy["out"])
    assert not checker.errors and not checker.stack, (checker.errors, checker.stack)
    data = json.loads(checker.json_text)
    assert [d["id"] for d in data["documents"]] == [d.id for d in toy["docs"]]
    assert all(d["sentences"][0].endswith("<b>&amp;</b>") for d in data["documents"])
    assert [d["truth"] for d in data["documents"]] == [[_truth(i)] for i in range(N_DOCS)]
    assert data["max_sentences"] == 4
    run1, run2 = data["runs"]
    for run, mmi_file, icda_file in ((run1, 0, 2), (run2, 3, 4)):
        mmi = json.loads(toy["evals"][mmi_file].read_text())["documents"]["positions"]
        icda = json.loads(toy["evals"][icda_file].read_text())["documents"]["positions"]
        assert run["mmi"] == mmi and run["icda"] == icda
    assert run1["icda_iteration"] == 2 and run2["icda_iteration"] == 1
    assert run1["outcome"] == [_expected_outcome(i) for i in range(N_DOCS)]
    assert set(run2["outcome"]) == {"same", "both_wrong"}
    pair, = data["counterfactuals"]
    assert pair["source"] == "train-1" and pair["swapped"] == [0]
    assert pair["original"][0] == "good food" and pair["counterfactual"][0] == "bad food"
    # text that would end the <script> element or open a comment is escaped in the page
    page = toy["out"].read_text()
    assert "</script> <!-- loud" not in page and pair["original"][1] == "</script> <!-- loud"



def test_labels_are_shown_by_the_class_names_of_the_prepared_data(toy, tmp_path):
    """A stats.json beside test.jsonl naming the classes: the page shows "label POS" for the
    documents and the counterfactuals; without it (the toy page above) the indices."""
    assert [d["label"] for d in toy["data"]["documents"]][:2] == [0, 1] and toy["data"]["class_names"] is None
    (toy["test"].parent / "stats.json").write_text(json.dumps({"class_names": ["NEG", "POS"]}))
    out = tmp_path / "named.html"
    data = write_viewer("toy", toy["test"], toy["evals"], toy["augmented"], out)
    assert data["class_names"] == ["NEG", "POS"]
    assert [d["label"] for d in data["documents"]] == [("NEG", "POS")[i % 2] for i in range(N_DOCS)]
    pair, = data["counterfactuals"]
    assert (pair["label"], pair["cf_label"]) == ("POS", "NEG")
    assert json.loads(_parse(out).json_text)["documents"][1]["label"] == "POS"
    assert "label ${doc.label" in out.read_text()  # the page prints the label it is given


def test_a_run_with_only_iteration_0_shows_mmi_and_no_icda(toy, tmp_path):
    """As in the tables, iteration 0 (MMI) is never ICDA: a run that has not reached iteration 1
    keeps its MMI selections and has no ICDA selections, iteration or precision (no outcomes to
    filter on), also when its summary has only iteration 0."""
    from icda.records import RunSummary

    ids = [d.id for d in toy["docs"]]
    only_mmi = _eval(tmp_path / "run3/iter0/eval.json", 3, 0, ids, [[1]] * N_DOCS)
    summary = tmp_path / "run3/summary.json"
    RunSummary(dataset="toy", run=3, iterations=1, converged=False, reason="r", per_iteration=[]).write(summary)
    for summaries in (None, [summary]):
        out = tmp_path / "only_mmi.html"
        data = write_viewer("toy", toy["test"], [*toy["evals"], only_mmi], None, out, summaries=summaries)
        run1, run2, run3 = data["runs"]
        assert (run1["icda_iteration"], run2["icda_iteration"]) == (2, 1)
        assert run3["run"] == 3 and run3["mmi"] == [[1]] * N_DOCS and run3["mmi_precision"] == 0.5
        assert run3["icda_iteration"] is None and run3["icda"] is None and run3["icda_precision"] is None
        assert run3["outcome"] == [None] * N_DOCS
        checker = _parse(out)
        assert not checker.errors and not checker.stack
        assert json.loads(checker.json_text)["runs"][2]["icda"] is None
    assert "run.icda_iteration === null" in out.read_text()  # the page says "no ICDA yet"

def test_each_run_shows_its_verdict_above_its_documents(toy, tmp_path):
    """The verdict of a run's summary.json (whether ICDA helped, did not apply or went the wrong
    way) is in the page's data under the run's number, and the page writes it into #run-verdict."""
    from icda.records import RunSummary

    summary = tmp_path / "run2/summary.json"
    summary.parent.mkdir(parents=True, exist_ok=True)
    RunSummary(dataset="toy", run=2, iterations=2, converged=True, reason="r", per_iteration=[], final_iteration=1,
               verdict="wrong way", verdict_reason="no more flips than MMI's; MMI reported").write(summary)
    other = tmp_path / "other.json"
    RunSummary(dataset="other", run=1, iterations=2, converged=True, reason="r", per_iteration=[],
               verdict="helped", verdict_reason="x").write(other)
    out = tmp_path / "verdict.html"
    data = write_viewer("toy", toy["test"], toy["evals"], None, out, summaries=[summary, other])
    assert data["verdicts"] == {"2": "ICDA went the wrong way (no more flips than MMI's; MMI reported)"}
    page = out.read_text()
    assert 'id="run-verdict"' in page and "DATA.verdicts" in page


def test_outcome_rules():
    truth = frozenset({2})
    assert outcome([0], [2], truth) == "fixed"
    assert outcome([2], [0], truth) == "broke"
    assert outcome([0], [1], truth) == "both_wrong"
    assert outcome([2], [2], truth) == "same"
    assert outcome([0], [2], None) is None
    assert outcome([], [2], truth) == "fixed"


def test_cli_writes_the_page(toy, tmp_path):
    out = tmp_path / "cli/rationales.html"
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"encoder": {"max_sentences": 3}}))
    assert main(["report", "viewer", "--dataset", "toy", "--test", str(toy["test"]),
                 "--settings", str(settings), "--evals", *map(str, toy["evals"]),
                 "--augmented", str(toy["augmented"]), "--out", str(out)]) == 0
    data = json.loads(_parse(out).json_text)
    assert data["dataset"] == "toy" and data["max_sentences"] == 3


def test_eval_without_per_document_selections_is_named(toy, tmp_path):
    old = toy["evals"][0]
    obj = json.loads(old.read_text())
    del obj["documents"]
    old.write_text(json.dumps(obj))
    with pytest.raises(DataError, match="per-document rationale positions") as err:
        write_viewer("toy", toy["test"], toy["evals"], None, tmp_path / "x.html")
    assert str(old) in str(err.value) and "re-run" in str(err.value)


def test_eval_of_other_documents_is_rejected(toy, tmp_path):
    write_documents([Document("test-0", 1, ("a",), frozenset({0}))], tmp_path / "other.jsonl")
    with pytest.raises(DataError, match="not the test documents"):
        write_viewer("toy", tmp_path / "other.jsonl", toy["evals"], None, tmp_path / "x.html")


# --- in a browser ---------------------------------------------------------------------------

_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_CLICK = """
<script>
// test driver: click a filter as a user would, then record what the page shows
document.getElementById("filter-fixed").click();
const shown = [...document.querySelectorAll("#document-list article.doc")];
const result = {
  pressed: document.getElementById("filter-fixed").getAttribute("aria-pressed"),
  ids: shown.map(a => a.dataset.id),
  outcomes: shown.map(a => a.dataset.outcome),
  icda: shown.map(a => [...a.querySelectorAll("li.icda")].map(li => Number(li.dataset.index))),
  mmi: shown.map(a => [...a.querySelectorAll("li.mmi")].map(li => Number(li.dataset.index))),
  truth: shown.map(a => [...a.querySelectorAll("li.truth")].map(li => Number(li.dataset.index))),
  unseen: shown.map(a => [...a.querySelectorAll("li.unseen")].map(li => Number(li.dataset.index))),
  pager: document.querySelector(".pager").textContent,
};
document.getElementById("tab-counterfactuals").click();
const pairs = [...document.querySelectorAll("#counterfactual-list article.pair")];
result.documentsHidden = document.getElementById("documents").hidden;
result.pairs = pairs.map(a => ({
  source: a.dataset.source,
  title: a.querySelector("h3").textContent,
  swapped: [...a.querySelectorAll("li.swapped")].map(li => [Number(li.dataset.index), li.textContent]),
}));
const out = document.createElement("pre");
out.id = "test-result";
out.textContent = JSON.stringify(result);
document.body.append(out);
</script>
"""


def _browser() -> str | None:
    return next((path for path in map(shutil.which, _BROWSERS) if path), None)


@pytest.mark.skipif(_browser() is None,
                    reason="no Chromium/Chrome on PATH (Debian: apt-get install -y chromium); "
                           "the browser test of the rationale viewer needs one")
def test_browser_filter_click_shows_only_fixed_documents_and_tab_shows_counterfactuals(toy, tmp_path):
    page = tmp_path / "driven.html"
    page.write_text(toy["out"].read_text(encoding="utf-8").replace("</body>", _CLICK + "</body>"),
                    encoding="utf-8")
    proc = subprocess.run(
        [_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    start = proc.stdout.index('<pre id="test-result">') + len('<pre id="test-result">')
    result = json.loads(html.unescape(proc.stdout[start:proc.stdout.index("</pre>", start)]))
    fixed = [i for i in range(N_DOCS) if _expected_outcome(i) == "fixed"]
    assert result["pressed"] == "true"
    assert result["ids"] == [f"test-{i}" for i in fixed][:PAGE_SIZE]
    assert set(result["outcomes"]) == {"fixed"}
    assert result["mmi"] == [[0]] * len(result["ids"])
    assert result["icda"] == [[_icda(i)] for i in fixed][:PAGE_SIZE]
    assert result["truth"] == [[_truth(i)] for i in fixed][:PAGE_SIZE]
    assert result["unseen"] == [[4]] * len(result["ids"])  # beyond max_sentences
    assert f"of {len(fixed)}" in result["pager"]
    # the counterfactual tab: the original beside its counterfactual, swapped sentence marked
    assert result["documentsHidden"] is True
    pair, = result["pairs"]
    assert pair["source"] == "train-1" and "train-1" in pair["title"] and "1 → 0" in pair["title"]
    assert pair["swapped"] == [[0, "good food"], [0, "bad foodfrom train-7, sentence 2"]]
