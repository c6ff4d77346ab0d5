"""The snapshot manifest (``manifest.json``) and the indexes of the registry and docs slots."""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field, field_validator

from replay.formats import Strict

SNAPSHOT_SCHEMA = 1
MANIFEST = "manifest.json"


class Source(Strict):
    """Where a snapshot came from."""

    kind: Literal["generated", "captured"]
    """``generated`` from sources in a repository, or ``captured`` from real services."""
    origin: str
    """The sources directory, or the services' addresses, it was made from."""
    tool: str
    """The program and version that wrote it."""


class RepositoryPart(Strict):
    """One git repository of the world, cut at its base commit."""

    name: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    """``owner/name`` on the fake GitHub."""
    bundle: str
    """The git bundle's path in the snapshot; it holds only history up to ``base_commit``."""
    base_commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    default_branch: str


class Manifest(Strict):
    """The table of contents of a snapshot, and the hash of every part."""

    schema_: Literal[1] = Field(alias="schema")
    at: AwareDatetime
    """T: the moment the world stood still."""
    source: Source
    repositories: list[RepositoryPart]
    services: dict[Literal["github", "linear", "slack"], str]
    """Each service's world-state file in the snapshot."""
    registry: str | None = None
    """The registry cache's index, if the snapshot has one."""
    docs: str | None = None
    """The docs cache's index, if the snapshot has one."""
    parts: dict[str, str]
    """sha256 (hex) of every file of the snapshot except this manifest, by relative path."""

    model_config = Strict.model_config | {"populate_by_name": True}

    @field_validator("parts")
    @classmethod
    def _hex(cls, parts: dict[str, str]) -> dict[str, str]:
        for name, digest in parts.items():
            if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
                raise ValueError(f"{name}: not a sha256 hex digest")
            if name.startswith("/") or ".." in name.split("/"):
                raise ValueError(f"{name}: part paths must stay inside the snapshot")
        return parts


class PythonFile(Strict):
    """One distribution file of a Python project, as the index served it at T."""

    project: str
    version: str
    filename: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """The file's content hash; the bytes live in the shared blob store under this name."""
    size: int = Field(ge=0)
    upload_time: AwareDatetime
    requires_python: str | None = None
    metadata_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    """The hash of the file's core metadata (PEP 658), stored as a blob too."""
    yanked: bool | str = False


class NpmVersion(Strict):
    """One version of an npm package: its manifest as the registry served it, and its tarball."""

    package: str
    version: str
    publish_time: AwareDatetime
    manifest: dict[str, object]
    """The version's packument entry, ``dist`` included (tarball URL as upstream had it)."""
    tarball_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class RegistryIndex(Strict):
    """The registry slot: which package files existed at T (the bytes are shared blobs)."""

    schema_: Literal[1] = Field(alias="schema")
    python: list[PythonFile] = Field(default_factory=list)
    npm: list[NpmVersion] = Field(default_factory=list)

    model_config = Strict.model_config | {"populate_by_name": True}


class DocsPage(Strict):
    """One recorded GET response of a documentation site."""

    url: str
    status: int
    content_type: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    fetched_at: AwareDatetime


class DocsIndex(Strict):
    schema_: Literal[1] = Field(alias="schema")
    pages: list[DocsPage] = Field(default_factory=list)

    model_config = Strict.model_config | {"populate_by_name": True}
