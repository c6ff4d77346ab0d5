"""``replay image base`` and ``replay image env CASE``: images built without a registry."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from replay.cli.common import out

app = typer.Typer(help="Base and environment images, built offline.", no_args_is_help=True)


@app.command("base")
def base(
    release: Annotated[
        str,
        typer.Option(help="Debian release: bullseye (Python 3.9), bookworm (3.11), trixie (3.13)."),
    ] = "bookworm",
    toolchain: Annotated[
        list[str] | None,
        typer.Option(help="A toolchain to add (node: Debian's nodejs and npm); repeatable."),
    ] = None,
    package: Annotated[
        list[str] | None,
        typer.Option(
            help="A Debian package of the release to add (a case's environment.packages); "
            "repeatable."
        ),
    ] = None,
    force: Annotated[bool, typer.Option(help="Rebuild even if a matching image exists.")] = False,
    mirror: Annotated[
        str | None, typer.Option(help="Debian mirror (default: the one apt uses here).")
    ] = None,
) -> None:
    """Build replay-base:<release>[-<toolchain>][-deb.<hash>] with debootstrap and docker
    import (cached by recipe); toolchains and packages are a layer installed on top of the
    release's image."""
    from replay.images.base import BaseRecipe, apt_mirror, base_tag, ensure_base_image
    from replay.runtime import get_runtime

    recipe = BaseRecipe.for_release(release, mirror or apt_mirror(suite=release))
    tools = toolchain or []
    rt = get_runtime("docker")
    try:
        image, built = ensure_base_image(
            rt, release, tools, recipe=recipe, force=force, packages=package or ()
        )
    finally:
        rt.close()
    verb = "built" if built else "up to date:"
    tag = base_tag(release, tools, package or ())
    out.print(f"{verb} {tag} {image} (recipe {recipe.digest()}, from {recipe.mirror})")


@app.command("env")
def env(
    case: Annotated[Path, typer.Argument(help="Case file (case.yaml).")],
    force: Annotated[bool, typer.Option(help="Rebuild even if a matching image exists.")] = False,
    gateway: Annotated[
        Path | None,
        typer.Option(help="State file of a running world (default: start one for the build)."),
    ] = None,
) -> None:
    """Build the case's environment image: repository at the base commit, setup as of T."""
    from replay.base.case import load_case
    from replay.images.base import ensure_case_base_image
    from replay.images.env import build_env_image, cached_env_image
    from replay.runtime import get_runtime
    from replay.world import running_world

    loaded = load_case(case)
    rt = get_runtime("docker")
    try:
        # A replay-base image the case names is built when missing; any other must exist.
        ensure_case_base_image(rt, loaded.environment)
        cached = None if force else cached_env_image(loaded, rt)
        if cached is not None:
            image = cached
        elif gateway is not None:
            image = build_env_image(loaded, rt, json.loads(gateway.read_text()), force=force)
        else:
            with (
                tempfile.TemporaryDirectory(prefix="replay-world-") as tmp,
                running_world(loaded.snapshot, Path(tmp), "--case", str(case.resolve())) as state,
            ):
                image = build_env_image(loaded, rt, state, force=force)
    finally:
        rt.close()
    verb = "built" if image.built else "up to date:"
    out.print(f"{verb} {image.reference} {image.id} (recipe {image.recipe})")
