"""Resuming a killed run (docs/cluster.md): what Snakemake's ``--rerun-incomplete`` misses in
this workflow, and the temporary files and folders that a killed job leaves.

Snakemake marks a job's outputs incomplete when it starts the job and unmarks them once it has
recorded the finished job (``.snakemake/incomplete``, ``.snakemake/metadata``). After a kill, a
job whose command had finished but which was not yet recorded keeps its marks; on the next run
Snakemake reruns it (``rerun-incomplete: true``, profiles/default) -- but it looks at the marks
only once, for the jobs it knows before it reads the checkpoints' outputs (Snakemake 9.27,
``DAG.init``: ``check_incomplete`` runs before ``update_checkpoint_dependencies``). Every
iteration after the first, and everything a run's stop decision leads to, comes from a
checkpoint (``converge``): such a job with marked outputs counted as done, was never rerun, kept
its marks and, for ``eraser_scores``, its ``temp()`` export folder.

:func:`install` makes the workflow's main process check the marks of every job it adds from a
checkpoint as Snakemake checks the others (rerun with ``--rerun-incomplete``, otherwise
Snakemake's ``IncompleteFilesException``), and, before a real run that holds the working
directory alone, remove what killed jobs left: :func:`icda.io.stale_writes` under ``results/``,
and the ``temp()`` outputs of finished jobs that no job still needs (Snakemake removes them
after the last consumer or, while checkpoints are pending, later: a kill in between leaves
them).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from icda.io import stale_writes

log = logging.getLogger("icda.resume")


def install(workflow: Any, results: str | Path = "results") -> None:
    """Hook :func:`recheck_incomplete` and :func:`remove_stale` into ``workflow``'s building of
    its DAG (``workflow`` is the Snakefile's ``workflow``; ``results`` the folder, relative to
    the working directory, that holds every output the workflow writes). Does nothing in a job's
    own Snakemake process (``workflow.is_main_process`` false: a cluster job), where other jobs
    are running.

    Where this Snakemake lacks the internals the hooks use (``Workflow._build_dag``,
    ``DAG.update_checkpoint_dependencies``, ``DAG.check_incomplete``, ...: a Snakemake other than
    the ``constraints.txt`` pin, 9.27, may have renamed them), the run goes on as Snakemake alone
    would run it, with one warning naming what is missing and the fix.
    """
    if not workflow.is_main_process or not _has(workflow, "_build_dag"):
        return
    build = workflow._build_dag

    def build_dag():
        dag = workflow.dag
        if not all(_has(dag, name) for name in (
                "update_checkpoint_dependencies", "check_incomplete", "postprocess_after_update",
                "is_needed_tempfile", "forcefiles", "ignore_incomplete")):
            return build()
        update = dag.update_checkpoint_dependencies

        async def update_checkpoint_dependencies(jobs=None):
            updated = await update(jobs)
            return await recheck_incomplete(dag, during_run=jobs is not None) or updated

        dag.update_checkpoint_dependencies = update_checkpoint_dependencies
        build()
        if owns_workdir(workflow):
            workflow.async_run(remove_stale(dag, results))

    workflow._build_dag = build_dag


def _has(obj: Any, name: str) -> bool:
    """Whether ``obj`` has ``name``; if not, one warning that resuming a killed run falls back to
    Snakemake's own handling."""
    if hasattr(obj, name):
        return True
    import snakemake

    log.warning("Snakemake %s has no %s.%s: a job a checkpoint leads to that a killed run left "
                "unrecorded is not rerun, and what killed jobs left under results/ is not removed "
                "(docs/cluster.md). Fix: install the Snakemake of constraints.txt "
                "(pip install -c constraints.txt -e .)", snakemake.__version__, type(obj).__name__, name)
    return False


async def recheck_incomplete(dag: Any, during_run: bool = False) -> bool:
    """Check the incomplete marks of ``dag``'s jobs that will not run (those a checkpoint added
    included) as Snakemake checks those it knew before the checkpoints: with
    ``--rerun-incomplete`` (``profiles/default``) their marked outputs are forced, so that the
    jobs rerun with everything after them; without it Snakemake's ``IncompleteFilesException``
    names them (during a run, where raising would end the run, a warning does). Running and
    finished jobs are left alone (a running job's outputs are marked until it is recorded).

    Returns:
        whether jobs were forced (and the DAG updated).
    """
    if dag.ignore_incomplete:
        return False
    running = getattr(dag, "_running", set())
    stale = []
    for job in dag.jobs:
        if not (dag.needrun(job) or dag.finished(job) or job in running):
            stale += [f for f in await dag.workflow.persistence.incomplete(job) if f is not None]
    if not stale:
        return False
    if not dag.workflow.dag_settings.force_incomplete:
        if during_run:
            log.warning("incomplete outputs of a killed run, not rerun (no --rerun-incomplete): %s",
                        ", ".join(map(str, stale)))
            return False
        await dag.check_incomplete()  # raises IncompleteFilesException naming them
    log.warning("to rerun, marked incomplete by a killed run: %s", ", ".join(map(str, stale)))
    dag.forcefiles.update(stale)
    await dag.postprocess_after_update()
    return True


def owns_workdir(workflow: Any) -> bool:
    """Whether ``workflow`` is about to run jobs, in its main process, with no other Snakemake
    working in its directory: not a dry run, ``--touch``, ``--nolock`` run or any other command
    (``--unlock``, ``--cleanup-metadata``, ...), and no lock left in ``.snakemake/locks`` (a
    running Snakemake's, or a killed one's until ``snakemake --unlock``)."""
    persistence = getattr(workflow, "persistence", None)
    read_locks = getattr(persistence, "_read_locks", None)
    return (workflow.is_main_process and workflow.executor_plugin is not None and not workflow.dryrun
            and not workflow.touch and workflow.execution_settings.lock and read_locks is not None
            and next(iter(read_locks()), None) is None)


async def remove_stale(dag: Any, results: str | Path = "results") -> list[str]:
    """Remove what killed jobs left: :func:`icda.io.stale_writes` under ``results`` and the
    existing ``temp()`` outputs of jobs that will not run that no job that will run needs and
    that are not targets (as Snakemake removes them after a job; kept while a checkpoint is
    pending, which may add a job that needs them: those Snakemake removes itself once the
    checkpoints are done). Call only while no job runs (:func:`owns_workdir`).

    Returns:
        the removed paths, as strings, each logged.
    """
    from snakemake.io import is_flagged

    removed = []
    for path in stale_writes(results):
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
        removed.append(str(path))
    deferred = getattr(dag, "_deferred_temp_jobs", None)
    for job in dag.jobs:
        if dag.needrun(job) or job.is_checkpoint or job in dag.targetjobs:
            continue
        temp = [f for f in job.output if is_flagged(f, "temp") and f not in dag.targetfiles and await f.exists()]
        if not temp:
            continue
        if dag.checkpoint_jobs:  # Snakemake's own rule (DAG.finish): none removed while checkpoints are pending
            if deferred is not None:
                deferred.append(job)
            continue
        for f in temp:
            if not dag.is_needed_tempfile(job, f):
                await f.remove(remove_non_empty_dir=True)
                removed.append(str(f))
    for path in removed:
        log.warning("removed %s, left by a killed run", path)
    return removed
