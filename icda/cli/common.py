"""Arguments shared by the commands that load a dataset's workspace."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_workspace_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--settings", type=Path, required=True,
                        help="settings.json with encoder/model/train/icda/device sections")
    parser.add_argument("--data-dir", type=Path, required=True,
                        help="prepared dataset folder holding train/dev/test.jsonl")
    parser.add_argument("--embeddings", type=Path,
                        help="embedding cache from `python -m icda embed` (frozen mode)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")


def load_settings(args: argparse.Namespace):
    """The settings of ``--settings``, after applying ``--threads`` (torch CPU threads)."""
    import torch

    from icda.settings import Settings

    if args.threads:
        torch.set_num_threads(args.threads)
    return Settings.load(args.settings)
