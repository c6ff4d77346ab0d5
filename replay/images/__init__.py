"""Images without a registry: the debootstrapped base images and each case's environment image."""

from __future__ import annotations

from replay.images.base import (
    BASE_IMAGE,
    RELEASES,
    TOOLCHAINS,
    BaseRecipe,
    Release,
    apt_mirror,
    base_tag,
    choose_release,
    ensure_base_image,
    ensure_case_base_image,
    read_requires_python,
)
from replay.images.env import EnvImage, build_env_image, env_reference

__all__ = [
    "BASE_IMAGE",
    "RELEASES",
    "TOOLCHAINS",
    "BaseRecipe",
    "EnvImage",
    "Release",
    "apt_mirror",
    "base_tag",
    "build_env_image",
    "choose_release",
    "ensure_base_image",
    "ensure_case_base_image",
    "env_reference",
    "read_requires_python",
]
