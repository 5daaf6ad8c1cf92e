# Model selection: iteration 0 (MMI) and COMP by dev loss; iterations >= 1 with the degeneration
# and ΔA penalties of the paper (icda/selection.py).


rule select:
    input:
        unpack(_select_inputs),
    output:
        "results/{dataset}/run{run}/iter{k}/selected.json",
    params:
        args=_select_args,
        candidate_loss=lambda wc: icda_workflow.dataset_settings(config, wc.dataset)["icda"]["candidate_loss"],
    log:
        "results/logs/{dataset}/run{run}/iter{k}/select.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda select --iteration {wildcards.k} {params.args} --candidate-loss {params.candidate_loss:q}"
        " --data-dir results/{wildcards.dataset}/data --out {output} > {log} 2>&1"


rule select_comp:
    input:
        data=rules.prepare.output,
        candidates=lambda wc: comp_files(wc, "history.json"),
        rationales=lambda wc: comp_files(wc, "rationales.json"),
    output:
        "results/{dataset}/run{run}/comp/selected.json",
    params:
        dirs=lambda wc, input: " ".join(str(Path(p).parent) for p in input.candidates),
    log:
        "results/logs/{dataset}/run{run}/comp/select.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda select --iteration 0 --candidates {params.dirs}"
        " --data-dir results/{wildcards.dataset}/data --out {output} > {log} 2>&1"
