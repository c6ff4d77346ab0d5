"""The Docker provider, on the Docker SDK (``docker`` package).

Containers run with ``--network none`` (loopback only), every capability dropped but the few a
root user needs to own files, ``no-new-privileges``, and ``docker-init`` as PID 1. A command
run as another user (``exec(user=...)``) has no capability at all. Limits map to the engine's:
CPU quota, memory without swap, a pids limit; wall time is kept here. Whether a limit was hit is
read from the container's cgroup (the OOM killer's and the pids controller's counters), so a
run stopped for memory is told apart from one that crashed.

Disk: this engine's storage driver (fuse-overlayfs here; overlay2 needs xfs with pquota for
``--storage-opt size``) cannot bound a container's writable layer, so a bounded place is a
:class:`~replay.runtime.base.Scratch`: a named volume of the ``local`` driver with
``type=tmpfs,o=size=...,nr_inodes=...``, mounted by the engine on the host. The container
mounts them ``nocopy`` (the engine's own copy of the image's content would keep neither the
owner nor the mtimes asked for), so a *keeper* container of the same image mounts the volumes
too, copies the image's content in (``cp -a``, then owner and mtimes), and
lives as long as the container: a tmpfs volume lives only while some container mounts it, so
the keeper also keeps the files through a stop (a limit), for ``copy_out``. A volume filled up
is read from the host (``statvfs`` of its mount point) while commands run.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import shutil
import socket
import tarfile
import threading
import time
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import docker  # type: ignore[import-untyped]
from docker.errors import (  # type: ignore[import-untyped]
    APIError,
    DockerException,
    ImageNotFound,
    NotFound,
)
from docker.models.containers import (  # type: ignore[import-untyped]
    Container as SdkContainer,
)
from requests.exceptions import RequestException

from replay.runtime import rundir
from replay.runtime.base import (
    ENV_IMAGE_LABEL,
    IMAGE_KIND_LABEL,
    OWNER_LABEL,
    ROOT_LABEL,
    RUN_LABEL,
    Container,
    ContainerSpec,
    ExecResult,
    GcReport,
    LimitName,
    Owner,
    Runtime,
    SandboxError,
    provider,
    run_labels,
    run_root,
)
from replay.runtime.bounded import (
    READ_SIZE,
    STDERR,
    STDOUT,
    Caps,
    CopyReport,
    Kept,
    demux,
    extract,
)

# What root inside still needs to install packages and own files; NET_RAW (raw sockets),
# MKNOD, SYS_CHROOT, NET_BIND_SERVICE and the rest of Docker's default set are dropped.
KEEP_CAPS = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID"]
POLL = 0.2
KEEPER_MOUNT = "/replay-scratch"
"""Where the keeper container mounts volume ``i`` (``/replay-scratch/<i>``)."""


def _client() -> docker.DockerClient:
    try:
        return docker.from_env(timeout=300)
    except DockerException as exc:
        raise SandboxError(f"cannot reach the Docker engine: {exc}") from exc


@provider("docker")
class DockerRuntime(Runtime):
    """Containers on the local Docker engine."""

    def __init__(
        self,
        client: docker.DockerClient | None = None,
        owner: Owner | None = None,
        caps: Caps | None = None,
    ):
        self.client = client or _client()
        self.owner = owner or Owner.current()
        self.caps = caps or Caps.from_env()
        """How much of what its containers send back is kept (``REPLAY_CAP_*``)."""

    def create(self, spec: ContainerSpec, run_id: str) -> DockerContainer:
        limits = spec.limits
        labels = {**spec.labels, **run_labels(run_id, self.owner)}
        volumes: dict[str, dict[str, str]] = {
            str(m.source): {"bind": m.target, "mode": "ro" if m.read_only else "rw"}
            for m in spec.mounts
        }
        scratch = _Scratches(self.client, spec, labels)
        try:
            scratch.create_volumes()
        except BaseException:
            scratch.remove()
            raise
        for name, volume in zip(scratch.names, spec.scratch, strict=True):
            # nocopy: the engine must not copy the image's content into a still empty volume
            # while the keeper seeds it (the two start at once); the keeper's copy is the one.
            volumes[name] = {"bind": volume.target, "mode": "rw,nocopy"}
        kwargs: dict[str, Any] = {
            "command": list(spec.command),
            "environment": dict(spec.env),
            "labels": labels,
            "network_mode": spec.network,
            "init": True,
            "cap_drop": ["ALL"],
            "cap_add": KEEP_CAPS,
            "security_opt": ["no-new-privileges"],
            "volumes": volumes,
            "read_only": spec.read_only,
            "detach": True,
        }
        if spec.workdir:
            kwargs["working_dir"] = spec.workdir
        if spec.name:
            kwargs["name"] = spec.name
        if limits.cpus is not None:
            kwargs["nano_cpus"] = int(limits.cpus * 1e9)
        if limits.memory is not None:
            kwargs["mem_limit"] = limits.memory
            kwargs["memswap_limit"] = limits.memory
        if limits.pids is not None:
            kwargs["pids_limit"] = limits.pids
        # The keeper starts and seeds the volumes while the container itself starts: both
        # mount the same volumes, and the container's command (the gateway forwarder, in a
        # sandbox) reads nothing of them; create() returns once both are done.
        seeding = threading.Thread(target=scratch.start_and_seed, daemon=True)
        seeding.start()
        sdk: SdkContainer | None = None
        failure: BaseException | None = None
        try:
            sdk = self.client.containers.run(spec.image, **kwargs)
        except ImageNotFound as exc:
            failure = SandboxError(f"no image {spec.image!r} here (build it: replay image)")
            failure.__cause__ = exc
        except APIError as exc:
            failure = SandboxError(f"docker could not start {spec.image!r}: {exc}")
            failure.__cause__ = exc
        except BaseException as exc:
            failure = exc
        seeding.join()
        failure = failure or scratch.failure
        if failure is not None:
            if sdk is not None:
                _quietly(lambda: sdk.remove(force=True, v=True))
            scratch.remove()
            raise failure
        assert sdk is not None
        return DockerContainer(
            self.client, sdk, run_id, spec.limits.wall_time, scratch, caps=self.caps
        )

    def image_id(self, reference: str) -> str | None:
        try:
            return str(self.client.images.get(reference).id)
        except ImageNotFound:
            return None

    def image_labels(self, reference: str) -> dict[str, str]:
        try:
            image = self.client.images.get(reference)
        except ImageNotFound:
            return {}
        return dict(image.labels or {})

    def images(self, labels: Mapping[str, str]) -> list[str]:
        wanted = [f"{key}={value}" for key, value in labels.items()]
        try:
            found = self.client.images.list(filters={"label": wanted})
        except APIError as exc:
            raise SandboxError(f"cannot list images: {exc}") from exc
        return sorted(str(i.tags[0]) if i.tags else str(i.id) for i in found)

    def gc(
        self,
        *,
        everything: bool = False,
        runs: Collection[str] | None = None,
        images: bool = False,
        owners: Collection[str] | None = None,
    ) -> GcReport:
        try:
            report = self._gc(everything, runs, owners)
            if images:
                self._gc_images(report)
            return report
        except APIError as exc:
            raise SandboxError(f"garbage collection failed: {exc}") from exc

    def _gc_images(self, report: GcReport) -> None:
        """Remove stale images of ours: harness images first (they sit on env images)."""
        ours = self.client.images.list(all=True, filters={"label": IMAGE_KIND_LABEL})
        current_envs = {i.id for i in ours if i.labels.get(IMAGE_KIND_LABEL) == "env" and i.tags}
        stale = [
            i
            for i in ours
            if (kind := i.labels.get(IMAGE_KIND_LABEL)) in ("env", "harness")
            and (
                not i.tags
                or (kind == "harness" and i.labels.get(ENV_IMAGE_LABEL) not in current_envs)
            )
        ]
        stale.sort(key=lambda i: i.labels.get(IMAGE_KIND_LABEL) != "harness")
        for image in stale:
            name = image.tags[0] if image.tags else image.short_id
            try:
                for tag in image.tags:
                    self.client.images.remove(tag, noprune=False)
                with contextlib.suppress(ImageNotFound):
                    self.client.images.remove(image.id, noprune=False)
            except ImageNotFound:
                continue
            except APIError as exc:
                if exc.status_code == 409:  # a container (a live run) still uses it
                    report.kept_images.append(name)
                    continue
                raise
            report.images.append(name)

    def _gc(
        self, everything: bool, runs: Collection[str] | None, owners: Collection[str] | None
    ) -> GcReport:
        report = GcReport()
        dead: dict[str, bool] = {}
        here = str(run_root())

        def gone(labels: Mapping[str, str]) -> bool:
            run = labels.get(RUN_LABEL, "")
            if not run:
                return False  # from an image that kept an emptied label; no run of ours
            if runs is not None and run not in runs:
                return False
            if owners is not None and labels.get(OWNER_LABEL) not in owners:
                return False
            if everything:
                return True
            if labels.get(ROOT_LABEL, here) != here:
                return False  # a dead runner of another run root: that root's to collect
            if run not in dead:
                owner = Owner.from_labels(labels)
                dead[run] = owner is None or not owner.alive()
            return dead[run]

        flt = {"label": RUN_LABEL}
        # ignore_removed: another gc (or a run's own cleanup) may remove one while we list.
        for c in self.client.containers.list(all=True, filters=flt, ignore_removed=True):
            if gone(c.labels):
                _quietly(lambda c=c: c.remove(force=True, v=True))
                report.containers.append(c.name)
        for n in self.client.networks.list(filters=flt):
            if gone(n.attrs.get("Labels") or {}):
                _quietly(n.remove)
                report.networks.append(n.name)
        for v in self.client.volumes.list(filters=flt):
            if gone(v.attrs.get("Labels") or {}):
                _quietly(lambda v=v: v.remove(force=True))
                report.volumes.append(v.name)
        for run, path in rundir.stale(everything, runs, owners):
            shutil.rmtree(path, ignore_errors=True)
            report.run_dirs.append(run)
        report.kept_runs.extend(sorted(r for r, d in dead.items() if not d))
        return report

    def data_root(self) -> Path | None:
        try:
            root = self.client.info().get("DockerRootDir")
        except DockerException:
            return None
        local = Path(root) if root else None
        return local if local is not None and local.is_dir() else None

    def close(self) -> None:
        self.client.close()


def _quietly(fn: Any) -> None:
    """Remove something that someone else (another gc, the run itself) may be removing too."""
    try:
        fn()
    except NotFound:
        pass
    except APIError as exc:
        if exc.status_code != 409:  # 409: its removal is already in progress
            raise


class _Scratches:
    """The bounded volumes of one container, and the keeper container that holds them."""

    def __init__(
        self, client: docker.DockerClient, spec: ContainerSpec, labels: Mapping[str, str]
    ) -> None:
        self.client = client
        self.spec = spec
        self.labels = dict(labels)
        tag = uuid.uuid4().hex[:12]
        self.names = [f"replay-scratch-{tag}-{i}" for i in range(len(spec.scratch))]
        self.paths: list[Path] = []
        self.keeper: SdkContainer | None = None
        self.failure: BaseException | None = None
        """Why :meth:`start_and_seed` failed, if it did (it runs in a thread of its own)."""

    def create_volumes(self) -> None:
        try:
            for name, volume in zip(self.names, self.spec.scratch, strict=True):
                uid, gid = volume.owner
                options = (
                    f"size={volume.size},nr_inodes={volume.inodes},"
                    f"uid={uid},gid={gid},mode={volume.mode:o}"
                )
                created = self.client.volumes.create(
                    name=name,
                    driver="local",
                    driver_opts={"type": "tmpfs", "device": "tmpfs", "o": options},
                    labels={**self.labels, "replay.role": "scratch"},
                )
                self.paths.append(Path(str(created.attrs.get("Mountpoint", "/nonexistent"))))
        except APIError as exc:
            raise SandboxError(f"docker could not make the bounded volumes: {exc}") from exc

    def start_and_seed(self) -> None:
        """Start the keeper and copy the image's content in; a failure is kept in
        :attr:`failure`, for the thread that waits on this one."""
        if not self.spec.scratch:
            return
        try:
            self._start_keeper()
            self._seed()
        except BaseException as exc:
            self.failure = exc

    def _start_keeper(self) -> None:
        try:
            self.keeper = self.client.containers.run(
                self.spec.image,
                ["sleep", "infinity"],
                labels={**self.labels, "replay.role": "keeper"},
                network_mode="none",
                init=True,
                cap_drop=["ALL"],
                cap_add=KEEP_CAPS,
                security_opt=["no-new-privileges"],
                volumes={
                    name: {"bind": f"{KEEPER_MOUNT}/{i}", "mode": "rw"}
                    for i, name in enumerate(self.names)
                },
                detach=True,
            )
        except ImageNotFound as exc:
            image = self.spec.image
            raise SandboxError(f"no image {image!r} here (build it: replay image)") from exc
        except APIError as exc:
            raise SandboxError(f"docker could not make the bounded volumes: {exc}") from exc

    def _seed(self) -> None:
        assert self.keeper is not None
        lines = ["set -e"]
        for i, volume in enumerate(self.spec.scratch):
            inside = f"{KEEPER_MOUNT}/{i}"
            owner = f"{volume.owner[0]}:{volume.owner[1]}"
            if volume.seed:
                src = shlex.quote(volume.target.rstrip("/") or "/")
                lines.append(f"if [ -d {src} ]; then cp -a {src}/. {inside}/; fi")
                lines.append(f"chown -R -h {owner} {inside}")
                if volume.mtime is not None:
                    stamp = f"@{volume.mtime:.6f}"
                    lines.append(f"find {inside} -exec touch -h -d {stamp} {{}} +")
            else:
                lines.append(f"chown {owner} {inside}")
            lines.append(f"chmod {volume.mode:o} {inside}")
        code, out = self.keeper.exec_run(["sh", "-c", "\n".join(lines)])
        if code != 0:
            text = out.decode(errors="replace")[-2000:]
            if "No space left" in text:
                raise SandboxError(
                    "the image's content does not fit in its bounded volume "
                    f"(raise Limits.disk or Limits.inodes): {text}"
                )
            raise SandboxError(f"seeding the bounded volumes failed ({code}): {text}")

    def filled(self) -> LimitName | None:
        """``disk`` or ``inodes`` when a volume has no room left, read from the host."""
        for path in self.paths:
            try:
                st = os.statvfs(path)
            except OSError:
                continue  # an engine on another machine: ENOSPC still bounds, unreported
            if st.f_blocks and st.f_bfree == 0:
                return "disk"
            if st.f_files and st.f_ffree == 0:
                return "inodes"
        return None

    def remove(self) -> None:
        if self.keeper is not None:
            keeper = self.keeper
            _quietly(lambda: keeper.remove(force=True, v=True))
            self.keeper = None
        for name in self.names:
            with contextlib.suppress(NotFound):
                _quietly(lambda name=name: self.client.api.remove_volume(name, force=True))


class DockerContainer(Container):
    """A running Docker container."""

    def __init__(
        self,
        client: docker.DockerClient,
        sdk: SdkContainer,
        run_id: str,
        wall: float | None,
        scratch: _Scratches | None = None,
        caps: Caps | None = None,
    ) -> None:
        self.client = client
        self.caps = caps or Caps.from_env()
        self.sdk = sdk
        self.id = str(sdk.id)
        self.run_id = run_id
        self.wall = wall
        self.started = time.monotonic()
        self.deadline = None if wall is None else self.started + wall
        self._limit: LimitName | None = None
        self._filled: LimitName | None = None
        self._scratch = scratch
        self._cgroups = _cgroup_dirs(client, self.id)

    def restart_deadline(self) -> None:
        self.started = time.monotonic()
        self.deadline = None if self.wall is None else self.started + self.wall

    # ------------------------------------------------------------------ exec

    def exec(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
        timeout: float | None = None,
        user: str | None = None,
        stdin: bytes | None = None,
        cap: int | None = None,
        stdout_file: Path | None = None,
        stderr_file: Path | None = None,
    ) -> ExecResult:
        with contextlib.ExitStack() as files:
            keep = self.caps.exec_output if cap is None else cap
            # Standard output held in memory is the runner's data channel (a tar of listings,
            # the grader's records, a diff): past the cap its head is kept whole. What goes to
            # a file, and standard error (messages), keep their head and their tail.
            out = Kept(
                keep,
                None if stdout_file is None else files.enter_context(stdout_file.open("wb")),
                tail=stdout_file is not None,
            )
            err = Kept(
                keep, None if stderr_file is None else files.enter_context(stderr_file.open("wb"))
            )
            result = self._exec(command, env, workdir, timeout, user, stdin, out, err)
            # Written (a file) or held (memory) as kept: the marker and tail go in at the end.
            out.close()
            err.close()
        return replace(
            result,
            stdout=b"" if stdout_file is not None else out.value(),
            stderr=b"" if stderr_file is not None else err.value(),
            stdout_cut=out.cut,
            stderr_cut=err.cut,
        )

    def _exec(
        self,
        command: Sequence[str],
        env: Mapping[str, str] | None,
        workdir: str | None,
        timeout: float | None,
        user: str | None,
        stdin: bytes | None,
        out: Kept,
        err: Kept,
    ) -> ExecResult:
        cmd = list(command)
        if timeout is not None:
            # coreutils' timeout kills the command's whole process group, inside.
            cmd = ["timeout", "--kill-after=2", f"{timeout:.3f}", *cmd]
        api = self.client.api
        start = time.monotonic()
        if self._limit is not None:
            return ExecResult(None, b"", b"", 0.0, limit=self._limit)
        try:
            eid = api.exec_create(
                self.id,
                cmd,
                environment=dict(env or {}),
                workdir=workdir,
                user=user or "",
                stdin=stdin is not None,
            )
            # The raw socket, not stream=True: docker-py never closes a streamed exec's socket.
            sock = api.exec_start(eid, socket=True)
        except APIError as exc:
            raise SandboxError(f"docker exec failed in {self.id[:12]}: {exc}") from exc
        ahead = upgraded(sock)
        reader = threading.Thread(target=_drain, args=(sock, ahead, out, err), daemon=True)
        reader.start()
        if stdin is not None:
            # Written beside the reader (a command may answer before it has read it all).
            threading.Thread(target=_feed, args=(sock, stdin), daemon=True).start()
        hard = None if timeout is None else start + timeout + 10
        while reader.is_alive():
            reader.join(POLL)
            now = time.monotonic()
            self._disk()
            limit = self._check(now)
            if limit is None and hard is not None and now > hard:
                self.stop(timeout=0)  # `timeout` inside did not manage; end it all
            elif limit is not None:
                self._limit = limit
                self.stop(timeout=0)
                reader.join(10)
                break
        if reader.is_alive():
            # The stream outlived its command and the container's stop: end it here, so
            # nothing writes to what is kept once it is closed.
            _close_sock(sock)
            reader.join(10)
        duration = time.monotonic() - start
        code = _exit_code(api, eid)
        self._disk()
        if self._limit is None:
            self._limit = self._check(time.monotonic(), final=True)
            if self._limit is not None:
                self.stop(timeout=0)
        timed_out = timeout is not None and code in (124, 137) and duration >= timeout
        limit = self._limit or self._filled
        return ExecResult(code, b"", b"", duration, timed_out, limit)

    def _disk(self) -> None:
        """Remember the first time a bounded volume was seen full (it never stops the run)."""
        if self._filled is None and self._scratch is not None:
            self._filled = self._scratch.filled()

    def _check(self, now: float, final: bool = False) -> LimitName | None:
        if self.deadline is not None and now > self.deadline:
            return "wall_time"
        counters = self._counters()
        if counters.get("oom_kill", 0) > 0:
            return "memory"
        if counters.get("pids_max", 0) > 0:
            return "pids"
        # The engine's OOMKilled flag (an inspection, one API call) only where the cgroup's
        # own count of OOM kills cannot be read (an engine on another machine).
        if final and "oom_kill" not in counters and self._oom_killed():
            return "memory"
        return None

    def _counters(self) -> dict[str, int]:
        found: dict[str, int] = {}
        memory, pids = self._cgroups
        for path, key, name in (
            (memory / "memory.oom_control", "oom_kill", "oom_kill"),
            (memory / "memory.events", "oom_kill", "oom_kill"),
            (pids / "pids.events", "max", "pids_max"),
        ):
            try:
                text = path.read_text()
            except OSError:
                continue
            for line in text.splitlines():
                k, _, v = line.partition(" ")
                if k == key and v.strip().isdigit():
                    found[name] = max(found.get(name, 0), int(v))
        return found

    def _oom_killed(self) -> bool:
        try:
            self.sdk.reload()
        except NotFound:
            return False
        return bool(self.sdk.attrs.get("State", {}).get("OOMKilled"))

    def limit_hit(self) -> LimitName | None:
        if self._limit is None:
            self._limit = self._check(time.monotonic(), final=True)
        self._disk()
        return self._limit or self._filled

    # ------------------------------------------------------------------ files

    def copy_in(
        self,
        source: Path,
        dest: str,
        *,
        owner: tuple[int, int] | None = None,
        mtime: float | None = None,
    ) -> None:
        def restamp(info: tarfile.TarInfo) -> tarfile.TarInfo:
            if owner is not None:
                info.uid, info.gid = owner
                info.uname = info.gname = ""
            if mtime is not None:
                info.mtime = mtime
            return info

        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.add(str(source), arcname=source.name, filter=restamp)
        try:
            try:
                done = self.sdk.put_archive(dest, buf.getvalue())
            except NotFound:
                # No such directory yet: made (an exec) only then, so a copy into a
                # directory that exists is one call.
                self.sdk.exec_run(["mkdir", "-p", dest])
                done = self.sdk.put_archive(dest, buf.getvalue())
            if not done:
                raise SandboxError(f"could not copy {source} into {self.id[:12]}:{dest}")
        except APIError as exc:
            raise SandboxError(f"could not copy {source} into {dest}: {exc}") from exc

    def copy_out(
        self, source: str, dest: Path, *, cap: int | None = None, file_only: bool = False
    ) -> CopyReport:
        # The engine's archive endpoint, read as it streams (docker-py's get_archive hands
        # out a generator whose response nobody can close when a copy stops early).
        api = self.client.api
        try:
            response = api._get(
                api._url("/containers/{0}/archive", self.id),
                params={"path": source},
                stream=True,
                headers={"Accept-Encoding": "identity"},
            )
        except (DockerException, RequestException) as exc:
            raise SandboxError(f"could not copy {source} out of {self.id[:12]}: {exc}") from exc
        try:
            try:
                api._raise_for_status(response)
            except (APIError, NotFound) as exc:
                raise SandboxError(f"could not copy {source} out of {self.id[:12]}: {exc}") from exc
            # What comes out was written by the agent: only regular files and directories,
            # inside ``dest``, owned by the runner, within the caps (replay.runtime.bounded).
            return extract(response.raw, dest, self.caps, file_only=file_only, cap=cap)
        finally:
            response.close()

    def logs(self) -> bytes:
        try:
            return bytes(self.sdk.logs())
        except NotFound:
            return b""

    def wait_for_output(self, marker: bytes, timeout: float) -> bool:
        """Follow the output as the engine streams it (one API call, woken by each write),
        rather than asking for all of it again and again."""
        try:
            stream = self.client.api.logs(self.id, stream=True, follow=True)
        except (APIError, NotFound):
            return False
        seen = b""
        found = threading.Event()

        def follow() -> None:
            nonlocal seen
            try:
                for chunk in stream:
                    # Only what a marker split between two chunks needs is kept.
                    seen = seen[-len(marker) :] + bytes(chunk)
                    if marker in seen:
                        found.set()
                        return
            except (OSError, ValueError, DockerException):
                pass  # the stream was closed under us (the timeout) or the container went

        reader = threading.Thread(target=follow, daemon=True)
        reader.start()
        reader.join(timeout)
        # The stream ends with the container; closing it ends a wait that timed out.
        with contextlib.suppress(OSError, ValueError, AttributeError):  # already ended
            stream.close()
        reader.join(10)
        response = getattr(stream, "_response", None)
        if response is not None:
            response.close()
        return found.is_set()

    # ------------------------------------------------------------------ lifecycle

    def stop(self, timeout: float = 5) -> None:
        try:
            if timeout <= 0:
                self.sdk.kill()
            else:
                self.sdk.stop(timeout=int(timeout))
        except (NotFound, APIError):
            pass  # already gone or already stopped

    def remove(self) -> None:
        scratch = self._scratch
        keeper = None if scratch is None else scratch.keeper
        if scratch is None or keeper is None:
            _quietly(lambda: self.sdk.remove(force=True, v=True))
        else:
            # The container and its keeper go at once; their volumes once both are gone.
            _at_once(
                lambda: _quietly(lambda: self.sdk.remove(force=True, v=True)),
                lambda: _quietly(lambda: keeper.remove(force=True, v=True)),
            )
            scratch.keeper = None
        if scratch is not None:
            scratch.remove()

    def status(self) -> str:
        try:
            self.sdk.reload()
        except NotFound:
            return "removed"
        return str(self.sdk.status)

    def commit(self, repository: str, tag: str, changes: Sequence[str] = ()) -> str:
        try:
            image = self.sdk.commit(repository=repository, tag=tag, changes=list(changes))
        except APIError as exc:
            raise SandboxError(f"docker commit of {self.id[:12]} failed: {exc}") from exc
        return str(image.id)


def _at_once(*steps: Callable[[], object]) -> None:
    """Run ``steps`` in threads of their own; raise the first one's exception, if any."""
    failures: list[BaseException] = []

    def step(fn: Callable[[], object]) -> None:
        try:
            fn()
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=step, args=(fn,), daemon=True) for fn in steps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]


def upgraded(sock: Any) -> bytes:
    """Ready the connection ``exec_start(socket=True)`` upgraded to be read raw; the bytes of
    the stream that came in with the answer's headers.

    http.client reads the ``101 UPGRADED`` headers through a buffered reader, which takes in
    whatever has arrived with them: on a busy machine, the first frames or all of a quick
    command's output. A reader of the raw socket never sees those bytes (docker-py issue
    3332: ``exec_run`` answers ``b''`` with exit code 0), so they are taken from the buffer
    here: without waiting (the socket non-blocking for that one read), before anyone else
    reads or writes the socket. Then the socket waits without a timeout: the client's
    (300 s) would end the reading of a command quiet for longer, its output cut short and
    its exit code not yet known; the exec's own limits end it instead.
    """
    raw = getattr(sock, "_sock", sock)
    if not hasattr(raw, "settimeout"):
        return b""
    response = getattr(sock, "_response", None)
    buffered = getattr(getattr(getattr(response, "raw", None), "_fp", None), "fp", None)
    ahead = b""
    if buffered is not None and hasattr(buffered, "read1"):
        raw.settimeout(0)
        with contextlib.suppress(OSError, ValueError):  # nothing yet; closed
            ahead = buffered.read1(READ_SIZE) or b""
    raw.settimeout(None)
    return ahead


def _drain(sock: Any, ahead: bytes, out: Kept, err: Kept) -> None:
    """Read an exec's multiplexed frames (1: stdout, 2: stderr) until it ends, each into
    what is kept of its stream (bounded); close it."""
    try:
        demux(sock, {STDOUT: out, STDERR: err}, ahead)
    except (OSError, ValueError):
        pass  # the container was stopped under the stream
    finally:
        _close_sock(sock)


def _close_sock(sock: Any) -> None:
    # Shut down first: a reader waiting on the socket (it has no timeout) wakes at once.
    with contextlib.suppress(OSError, ValueError, AttributeError):
        getattr(sock, "_sock", sock).shutdown(socket.SHUT_RDWR)
    for part in (getattr(sock, "_response", None), sock, getattr(sock, "_sock", None)):
        if part is not None:
            with contextlib.suppress(OSError, ValueError):
                part.close()


def _feed(sock: Any, data: bytes) -> None:
    """Write ``data`` to an exec's standard input, then end it (half-close: the output is
    still read). A command that ends without reading it all is no error."""
    raw = getattr(sock, "_sock", sock)
    with contextlib.suppress(OSError, ValueError):
        raw.sendall(data)
        raw.shutdown(socket.SHUT_WR)


def _exit_code(api: Any, eid: Any) -> int | None:
    try:
        info = api.exec_inspect(eid)
    except (APIError, NotFound):
        return None
    if info.get("Running"):
        return None
    code = info.get("ExitCode")
    return int(code) if code is not None else None


def _cgroup_dirs(client: docker.DockerClient, cid: str) -> tuple[Path, Path]:
    """The container's memory and pids cgroup directories, found through its init's pid.

    Works when the engine runs on this machine; elsewhere the paths do not exist and only the
    engine's ``OOMKilled`` flag is left to tell a memory stop.
    """
    memory = pids = Path("/nonexistent")
    try:
        pid = int(client.api.inspect_container(cid)["State"]["Pid"])
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except (APIError, OSError, KeyError, ValueError):
        return memory, pids
    unified: Path | None = None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        names = controllers.split(",")
        if controllers == "":  # the v2 hierarchy (alone, or beside v1's in hybrid mode)
            unified = Path("/sys/fs/cgroup") / path.lstrip("/")
        if "memory" in names:
            memory = Path("/sys/fs/cgroup/memory") / path.lstrip("/")
        if "pids" in names:
            pids = Path("/sys/fs/cgroup/pids") / path.lstrip("/")
    if unified is not None and (unified / "memory.events").exists():
        return unified, unified
    return memory, pids
