# Model choice: iteration 0 (MMI) and COMP by dev loss; iterations >= 1 by the configured rule
# (icda.candidate_loss, candidate_choice, delta_a_gate; icda/model_selection.py).


rule select:
    input:
        unpack(get_select_inputs),
    output:
        f"{ITER}/choice.json",
    params:
        data=get_data_dir,
        args=get_select_args,
        options=get_selection_options,
        candidates=get_candidate_seeds,  # tracked: changed seeds reselect
    priority: LOOP_PRIORITY
    log:
        "results/logs/{dataset}/run{run}/iter{k}/select.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda select --iteration {wildcards.k} {params.args} {params.options}"
        " --data-dir {params.data:q} --out {output:q} > {log:q} 2>&1"


rule select_comp:
    input:
        data=rules.prepare.output,
        candidates=COMP_CANDIDATES,
    output:
        f"{COMP}/choice.json",
    params:
        data=get_data_dir,
        dirs=get_comp_dirs,
    log:
        "results/logs/{dataset}/run{run}/comp/select.log",
    conda:
        "../../environment.yml"
    shell:
        "python -m icda select --iteration 0 --candidates {params.dirs}"
        " --data-dir {params.data:q} --out {output:q} > {log:q} 2>&1"
