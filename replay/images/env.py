"""A case's environment image: the repository at its base commit, dependencies as of T.

A sandbox from the base image (network locked to the gateway, see
:mod:`replay.runtime.sandbox`) gets the repository restored from the snapshot's bundle (only
the base commit's history), trusts the gateway's CA in the system store, runs the case's
``environment.setup`` commands through the gateway, whose registry serves what existed at T,
and is committed. The image's ID (a content digest: no registry is involved, so there is no
repository digest) is what a run records; the recipe hash label lets a rebuild be skipped.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay.base.case import Case
from replay.images.base import KIND_LABEL, RECIPE_LABEL, check_toolchains, parse_base_tag
from replay.runtime.base import (
    OWNER_LABEL,
    OWNER_START_LABEL,
    ROOT_LABEL,
    RUN_LABEL,
    Limits,
    Runtime,
    SandboxError,
)
from replay.runtime.sandbox import CA_INSIDE, Sandbox, SandboxConfig
from replay.snapshot import load_snapshot

ENV_REPOSITORY = "replay-env"
BUILD_LIMITS = Limits(cpus=None, memory=4 * 1024**3, pids=4096, wall_time=1800)
TRUST = (
    f"cp {CA_INSIDE} /usr/local/share/ca-certificates/replay-gateway.crt"
    " && update-ca-certificates >/dev/null"
)


@dataclass(frozen=True)
class EnvImage:
    """A built (or reused) environment image."""

    reference: str
    """``replay-env:<case id>``."""
    id: str
    """The image ID (``sha256:...``): what a run's record pins."""
    case_id: str
    recipe: str
    built: bool


def env_recipe(case: Case, base_id: str) -> str:
    """A hash of everything the image depends on: base image, snapshot, repository, setup."""
    manifest = (case.snapshot / "manifest.json").read_bytes()
    environment = case.environment.model_dump()
    for added in ("toolchains", "packages"):
        if not environment[added]:
            # Python only, as every case was before these: their recipes stay as they were.
            del environment[added]
    data = {
        "base": base_id,
        "snapshot": hashlib.sha256(manifest).hexdigest(),
        "repository": case.repository.model_dump(),
        "environment": environment,
        # 2: restores carry no ORIG_HEAD; 3: nor FETCH_HEAD nor a reflog; 4: the setup's
        # own files are left out of the agent's diff (SETUP_FILES_EXCLUDED).
        "version": 4,
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


SETUP_FILES_EXCLUDED = r"""
set -e
mkdir -p .git/info
git -c safe.directory='*' ls-files --others --exclude-standard --directory -z | python3 -c '
import sys
paths = [p for p in sys.stdin.buffer.read().split(b"\0") if p]
if paths:
    with open(".git/info/exclude", "ab") as f:
        f.write(b"\n# Made by the environment setup (replay), not by the agent:\n")
        for path in paths:
            for special in (b"\\", b"*", b"?", b"["):
                path = path.replace(special, b"\\" + special)
            if path.endswith(b" "):
                path = path[:-1] + b"\\ "
            f.write(b"/" + path + b"\n")
'
"""
"""What the setup left in the working tree that git does not ignore (``setup.py develop``'s
``*.egg-info``, a C extension built in place), named in the repository's ``.git/info/exclude``,
anchored and escaped: the agent's final diff (``git add -A``) is what the agent changed, not
what the image was built with. Without it every run's diff, an idle one's too, carried the
egg-info, and the grading listed it as put back on each run. A file so named never reaches the
grading, which starts from the same image: whatever the agent writes there is lost, not
graded."""


def env_reference(case: Case) -> str:
    return f"{ENV_REPOSITORY}:{case.id}"


def _base_id(case: Case, runtime: Runtime) -> str:
    reference = case.environment.base_image
    base_id = runtime.image_id(reference)
    if base_id is None:
        parsed = parse_base_tag(reference)
        command = "replay image base"
        if parsed is not None:
            release, tools = parsed
            command += f" --release {release.name}" + "".join(f" --toolchain {t}" for t in tools)
            command += "".join(f" --package {p}" for p in sorted(set(case.environment.packages)))
        raise SandboxError(f"no base image {reference!r} here: run `{command}`")
    check_toolchains(runtime, case.environment)
    return base_id


def cached_env_image(case: Case, runtime: Runtime) -> EnvImage | None:
    """The case's environment image if one from the same recipe exists (no world needed)."""
    ref = env_reference(case)
    recipe = env_recipe(case, _base_id(case, runtime))
    if runtime.image_labels(ref).get(RECIPE_LABEL) != recipe:
        return None
    image = runtime.image_id(ref)
    return None if image is None else EnvImage(ref, image, case.id, recipe, built=False)


def build_env_image(
    case: Case,
    runtime: Runtime,
    gateway: Mapping[str, Any],
    *,
    force: bool = False,
    timeout: float = 900,
) -> EnvImage:
    """Build the case's environment image through the running world ``gateway``."""
    ref = env_reference(case)
    base_id = _base_id(case, runtime)
    recipe = env_recipe(case, base_id)
    if not force:
        cached = cached_env_image(case, runtime)
        if cached is not None:
            return cached

    snapshot = load_snapshot(case.snapshot)
    workdir = case.environment.workdir
    config = SandboxConfig(
        image=base_id,
        limits=BUILD_LIMITS,
        labels={"replay.role": "env-build", "replay.base.case": case.id},
        mount_system_bundle=False,
        # Setup runs as root and its writes must land in the committed image.
        confined=False,
    )
    with (
        tempfile.TemporaryDirectory(prefix="replay-env-") as tmp,
        Sandbox(runtime, gateway, config) as box,
    ):
        local = snapshot.restore(case.repository.name, Path(tmp) / posixpath.basename(workdir))
        _strip_history_pointers(local)
        assert box.container is not None
        box.container.copy_in(local, posixpath.dirname(workdir))
        _check(box.sh(TRUST, timeout=60), "trusting the gateway's CA")
        for command in case.environment.setup:
            _check(box.sh(command, workdir=workdir, timeout=timeout), command, timeout)
        _check(
            box.sh(SETUP_FILES_EXCLUDED, workdir=workdir, timeout=120), "listing the setup's files"
        )
        image = box.container.commit(
            ENV_REPOSITORY,
            case.id,
            changes=[
                f"WORKDIR {workdir}",
                f"LABEL {KIND_LABEL}=env {RECIPE_LABEL}={recipe} replay.base.case={case.id}"
                f" replay.base={base_id}",
                # The build container's run labels would otherwise ride along into the image.
                f"LABEL {RUN_LABEL}= {OWNER_LABEL}= {OWNER_START_LABEL}= {ROOT_LABEL}=",
            ],
        )
    return EnvImage(ref, image, case.id, recipe, built=True)


def _strip_history_pointers(repo: Path) -> None:
    """No ORIG_HEAD, FETCH_HEAD or reflog in the image, whatever the restore left behind."""
    git = repo / ".git"
    for name in ("ORIG_HEAD", "FETCH_HEAD"):
        (git / name).unlink(missing_ok=True)
    shutil.rmtree(git / "logs", ignore_errors=True)


class SetupError(SandboxError):
    """An environment setup command failed: the message has its output's end, ``output``
    all of it (for a log beside the case or run)."""

    def __init__(self, message: str, command: str, output: str) -> None:
        super().__init__(message)
        self.command = command
        self.output = output


_FATAL = re.compile(r"fatal error: .+")
_COMPILE_ERROR = re.compile(r"^\s*\S+\.(?:c|cc|cpp|cxx|h|hpp|pyx):\d+:\d+: error: .+$", re.M)
_EXCEPTION = re.compile(
    r"^\s*(?:[A-Za-z_][\w.]*)?(?:Error|Exception|Conflict)\b: .+$", re.MULTILINE
)
_PIP_ERROR = re.compile(r"^ERROR: (?!Command errored out|Failed building|Could not build).+$", re.M)


def cause_line(output: str) -> str | None:
    """The line of a failed setup's output that says why, when one does: a compiler's fatal
    error (a header missing), else its first error (an API the interpreter no longer has),
    else the last exception a build raised, else pip's own first ``ERROR:`` line that is not
    its boilerplate ("Command errored out"). What was being built is said first when pip's
    output tells it (:func:`failed_distribution`)."""
    for pattern, pick in ((_FATAL, 0), (_COMPILE_ERROR, 0), (_EXCEPTION, -1), (_PIP_ERROR, 0)):
        found = [m.group(0).strip() for m in pattern.finditer(output)]
        if found:
            built = failed_distribution(output)
            line = found[pick].strip()
            return (f"building {built}: {line}" if built else line)[:300]
    return None


_BUILDING = re.compile(
    r"Failed building (?:wheel|editable) for (?P<a>[\w.-]+)"
    r"|Running setup\.py (?:install|develop) for (?P<b>[\w.-]+) \.\.\. error"
    r"|/pip-install-\w+/(?P<c>[A-Za-z0-9][\w.-]*?)_[0-9a-f]{32}/"
)


def failed_distribution(output: str) -> str | None:
    """The distribution whose build failed, as pip's output names it ("Failed building wheel
    for typed-ast", or the temporary directory it built in); None when it names none."""
    found = _BUILDING.search(output)
    if found is None:
        return None
    return next(name for name in found.group("a", "b", "c") if name)


_STEP = re.compile(
    r"^\s*(?:Collecting \S+|Building wheel for \S+|Running setup\.py (?:install|develop) for "
    r"\S+|Building editable for \S+|Installing collected packages|Installing build "
    r"dependencies|Preparing metadata)",
    re.MULTILINE,
)


def last_step(output: str) -> str | None:
    """The last step pip's output shows it taking (``Building wheel for numpy``), or None."""
    found = [m.group(0).strip() for m in _STEP.finditer(output)]
    return found[-1] if found else None


def _check(result: Any, what: str, timeout: float | None = None) -> None:
    if not result.ok:
        output = result.out + result.err
        cause = cause_line(output)
        if result.limit:
            why = f"hit its {result.limit} limit"
        elif getattr(result, "timed_out", False):
            # python-lsp-server 2019 (seventh held-out corpus): "exited None" said nothing.
            limit = f" in {timeout:.0f} s" if timeout else ""
            why = f"did not finish{limit}, its time limit"
            step = last_step(output)
            cause = (
                f"the last step pip's output shows: {step} (a source distribution that builds "
                "long, or a build that waits: name the test requirements without it "
                "(--requires), or choose a T when a wheel existed for the interpreter (--at))"
                if step
                else cause
            )
        else:
            why = f"exited {result.exit_code}"
        head = f"environment setup {what!r} {why}" + (f": {cause}\n" if cause else ": ")
        raise SetupError(head + output[-3000:], what, output)
