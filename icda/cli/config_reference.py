"""``python -m icda config-reference``: write config/README.md from the configuration schema.

Run from the repository root after changing ``workflow/schemas/config.schema.yaml``;
``--check`` only compares (exit status 1 and a diff when the committed file is out of date).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("config-reference", help="write config/README.md from the config schema",
                       description=__doc__)
    p.add_argument("--schema", type=Path, default=Path("workflow/schemas/config.schema.yaml"),
                   help="the JSON Schema of the workflow config (default: %(default)s)")
    p.add_argument("--out", type=Path, default=Path("config/README.md"),
                   help="the reference to write (default: %(default)s)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 with a diff if --out differs from the generated text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from icda.config_reference import drift, load_schema, render_reference, undocumented
    from icda.io import atomic_write

    schema = load_schema(args.schema)
    missing = undocumented(schema)
    if missing:
        print(f"warning: {args.schema}: keys without a description: {', '.join(missing)} "
              "(add `description:` to each)", file=sys.stderr)
    text = render_reference(schema)
    if args.check:
        diff = drift(text, args.out)
        if diff:
            print(diff, end="")
            print(f"{args.out} is out of date: run `python -m icda config-reference`", file=sys.stderr)
            return 1
        return 0
    with atomic_write(args.out) as fh:
        fh.write(text)
    print(f"wrote {args.out}")
    return 0
