"""The snapshot manifest (``manifest.json``) and the indexes of the registry and docs slots."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import (
    AwareDatetime,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from replay.base.formats import Strict
from replay.base.gitrepo import TAG_NAME

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


SUBMODULE_BRANCH = "pinned"
"""The one ref of a submodule's bundle: its pinned commit (a restore checks it out detached)."""


class Submodule(Strict):
    """A submodule of a repository, restored at the commit the base commit pins."""

    path: str
    """Where it is checked out, relative to the repository's top (the gitlink's path)."""
    name: str
    """Its name in ``.gitmodules`` (where git keeps it: ``.git/modules/<name>``)."""
    url: str
    """Its URL in ``.gitmodules``, as the repository says it."""
    objects: str = Field(pattern=r"^git/[\w.-]+/[\w.-]+\.git$")
    """The shared bare repository (under the blob store root) holding ``commit``'s history."""
    commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    """The commit the base commit pins."""

    @field_validator("path", "name")
    @classmethod
    def _inside(cls, value: str) -> str:
        parts = value.split("/")
        if (
            not value
            or any(p in ("", ".", "..") for p in parts)
            or re.search(r"[\x00-\x1f]", value)
        ):
            raise ValueError(f"{value!r} must be a relative path inside the repository")
        return value

    def as_part(self) -> RepositoryPart:
        """The submodule as a repository of its own: cut, bundled and audited like one."""
        return RepositoryPart(
            name=self.objects.removeprefix("git/").removesuffix(".git"),
            objects=self.objects,
            base_commit=self.commit,
            default_branch=SUBMODULE_BRANCH,
        )


class RepositoryPart(Strict):
    """One git repository of the world, cut at its base commit."""

    name: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    """``owner/name`` on the fake GitHub."""
    bundle: str | None = None
    """The git bundle's path in the snapshot; it holds only history up to ``base_commit``."""
    objects: str | None = Field(default=None, pattern=r"^git/[\w.-]+/[\w.-]+\.git$")
    """Or: the shared bare repository, relative to the blob store root
    (``git/<owner>/<name>.git``), that holds ``base_commit``'s history among others'.
    Restores never see it: they get a bundle of exactly the base's history, cut from it."""
    base_commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    default_branch: str
    tags: dict[str, str] = Field(default_factory=dict)
    """The tags every restore carries, ``{name: the object the tag names}``: those on
    ``base_commit``'s history with no tag object dated after T
    (:func:`replay.base.gitrepo.tags_at`), so that a version computed from git tags
    (setuptools-scm, hatch-vcs) is the one the project had at T."""

    @field_validator("tags")
    @classmethod
    def _tag_names(cls, tags: dict[str, str]) -> dict[str, str]:
        for name, sha in tags.items():
            if not TAG_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not a tag name kept here")
            if not re.fullmatch(r"[0-9a-f]{40}", sha):
                raise ValueError(f"tag {name}: {sha!r} is not an object id")
        return tags

    submodules: list[Submodule] = Field(default_factory=list)
    """The submodules the base commit pins, each restored at its commit beside the
    repository's files (``git submodule status`` clean)."""

    @model_validator(mode="after")
    def _one_source(self) -> RepositoryPart:
        if (self.bundle is None) == (self.objects is None):
            raise ValueError(
                "give exactly one of bundle (a git bundle in the snapshot) and objects "
                "(a shared store under the blob store root)"
            )
        if self.objects is not None and {".", ".."} & set(self.objects.split("/")):
            raise ValueError(f"objects: {self.objects!r} must stay inside the blob store")
        return self

    @model_serializer(mode="wrap")
    def _without_the_other(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Only the history the snapshot has is written: a bundle snapshot's manifest stays
        # exactly as it was before shared stores existed.
        data: dict[str, Any] = handler(self)
        for key in ("bundle", "objects"):
            if data.get(key) is None:
                data.pop(key, None)
        for key in ("tags", "submodules"):
            if not data.get(key):
                data.pop(key, None)  # and one without them as before they were kept
        return data

    @property
    def location(self) -> str:
        """Where the history comes from, for messages: the bundle, or the store and base."""
        return self.bundle or f"{self.objects}@{self.base_commit}"


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
    chosen_because: str | None = None
    """Why the recorder took this version: the requirement it satisfied at T, and what
    newer files it passed over as pip would (pre-releases, yanked releases). Left out of
    the file when unknown, so indexes recorded before it keep their bytes and hashes."""

    @model_serializer(mode="wrap")
    def _omit_unknown_reason(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("chosen_because") is None:
            data.pop("chosen_because", None)
        return data


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
