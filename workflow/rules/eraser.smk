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
