"""``replay doctor``: check this machine before a run costs anything."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from replay.cli.common import out


def doctor(
    cases: Annotated[
        list[Path] | None, typer.Argument(help="Case files whose images to check too.")
    ] = None,
    harness: Annotated[
        str, typer.Option(help="The harness whose provider's key to check.")
    ] = "reference",
    model_upstream: Annotated[
        str | None, typer.Option(help="The endpoint the model calls go to instead.")
    ] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Where run directories go.")] = Path(
        ".replay/runs"
    ),
) -> None:
    """Check Docker, the images, free disk, the model key and the provider's reachability;
    each problem with what to do. Exit 1 when anything needs fixing."""
    from replay.doctor import diagnose
    from replay.runtime import get_runtime

    runtime, error = None, None
    try:
        runtime = get_runtime("docker")
    except Exception as exc:  # any reason the engine cannot be reached is the finding
        error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    try:
        disks = {"runs": out_dir}
        if runtime is not None and (root := runtime.data_root()) is not None:
            disks["docker"] = root
        found = diagnose(
            runtime, error, cases=cases or [], harness=harness, upstream=model_upstream, disks=disks
        )
    finally:
        if runtime is not None:
            runtime.close()
    for finding in found:
        out.print(finding.line(), markup=False, soft_wrap=True)
    bad = [f for f in found if not f.ok]
    out.print(f"{len(bad)} to fix" if bad else "all ok", markup=False)
    raise typer.Exit(1 if bad else 0)
