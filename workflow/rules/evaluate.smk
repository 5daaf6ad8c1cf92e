# Test-set rationale precision of each iteration's selection and of the COMP baseline.


rule evaluate:
    input:
        settings="results/{dataset}/settings.json",
        data=rules.prepare.output,
        embeddings=embeddings,
        selected="results/{dataset}/run{run}/iter{k}/selected.json",
        models=lambda wc: candidate_files(wc.dataset, wc.run, wc.k, "model.pt"),
    output:
        "results/{dataset}/run{run}/iter{k}/eval.json",
    params:
        args=embeddings_arg,
    log:
        "results/logs/{dataset}/run{run}/iter{k}/evaluate.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda evaluate --settings {input.settings} --data-dir results/{wildcards.dataset}/data"
        " {params.args} --selected {input.selected} --out {output} --label dataset={wildcards.dataset}"
        " --label run={wildcards.run} --label iteration={wildcards.k} > {log} 2>&1"


rule evaluate_comp:
    input:
        settings="results/{dataset}/settings.json",
        data=rules.prepare.output,
        embeddings=embeddings,
        selected="results/{dataset}/run{run}/comp/selected.json",
        models=lambda wc: comp_files(wc, "model.pt"),
    output:
        "results/{dataset}/run{run}/comp/eval.json",
    params:
        args=embeddings_arg,
    log:
        "results/logs/{dataset}/run{run}/comp/evaluate.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda evaluate --settings {input.settings} --data-dir results/{wildcards.dataset}/data"
        " {params.args} --selected {input.selected} --out {output} --label dataset={wildcards.dataset}"
        " --label run={wildcards.run} --label iteration=null > {log} 2>&1"
