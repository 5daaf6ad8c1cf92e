# The final ICDA selector's rationales in the ERASER benchmark's format (DeYoung et al., ACL 2020):
# the test split as an ERASER data directory (docs/<docid>, test.jsonl), the selector's
# predictions (hard and soft rationales, comprehensiveness and sufficiency scores) and ERASER's
# metrics on them (docs/outputs.md#eraser-format).


rule eraser:
    input:
        data=rules.prepare.output,
        embeddings=get_embeddings,
        model=f"{DATASET}/icda_model/model.pt",
        card=f"{DATASET}/icda_model/model.json",
    output:
        annotations=f"{DATASET}/eraser/test.jsonl",
        predictions=f"{DATASET}/eraser/icda_predictions.jsonl",
        scores=f"{DATASET}/eraser/icda_scores.json",
    params:
        data=get_data_dir,
        args=get_embeddings_arg,
        out=lambda wc, output: os.path.dirname(output.annotations),
        model=lambda wc, input: os.path.dirname(input.model),
    log:
        "results/logs/{dataset}/eraser.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda export-eraser --data-dir {params.data:q} --out-dir {params.out:q} --model {params.model:q}"
        " {params.args} --predictions {output.predictions:q} --scores {output.scores:q} > {log:q} 2>&1"


rule eraser_scores:
    """ERASER's metrics of one iteration's chosen selector on the test split, beside its eval.json
    (the tables ask for those of MMI, CDA and ICDA only: get_eraser_scores), and its predictions
    in ERASER's results format, which ERASER's scorer reads against results/<dataset>/eraser/
    (the test split's data directory, rule eraser). The per-iteration data directory is temporary."""
    input:
        data=rules.prepare.output,
        embeddings=get_embeddings,
        choice=f"{ITER}/choice.json",
        candidates=get_candidates,
    output:
        scores=f"{ITER}/eraser_scores.json",
        predictions=f"{ITER}/eraser_predictions.jsonl",
        export=temp(directory(f"{ITER}/eraser_export")),
    params:
        data=get_data_dir,
        args=get_embeddings_arg,
    log:
        "results/logs/{dataset}/run{run}/iter{k}/eraser_scores.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda export-eraser --data-dir {params.data:q} --out-dir {output.export:q} --choice {input.choice:q}"
        " {params.args} --predictions {output.predictions:q} --scores {output.scores:q}"
        " --dataset {wildcards.dataset} --run {wildcards.run} --iteration {wildcards.k} > {log:q} 2>&1"


rule eraser_scores_comp:
    """ERASER's metrics of a run's COMP selector on the test split, beside its eval.json."""
    input:
        data=rules.prepare.output,
        embeddings=get_embeddings,
        choice=f"{COMP}/choice.json",
        candidates=COMP_CANDIDATES,
    output:
        scores=f"{COMP}/eraser_scores.json",
        predictions=f"{COMP}/eraser_predictions.jsonl",
        export=temp(directory(f"{COMP}/eraser_export")),
    params:
        data=get_data_dir,
        args=get_embeddings_arg,
    log:
        "results/logs/{dataset}/run{run}/comp/eraser_scores.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda export-eraser --data-dir {params.data:q} --out-dir {output.export:q} --choice {input.choice:q}"
        " {params.args} --predictions {output.predictions:q} --scores {output.scores:q}"
        " --dataset {wildcards.dataset} --run {wildcards.run} > {log:q} 2>&1"
