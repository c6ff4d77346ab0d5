"""Images without a registry: the debootstrapped base image and each case's environment image."""

from __future__ import annotations

from replay.images.base import BASE_IMAGE, BaseRecipe, apt_mirror, ensure_base_image
from replay.images.env import EnvImage, build_env_image, env_reference

__all__ = [
    "BASE_IMAGE",
    "BaseRecipe",
    "EnvImage",
    "apt_mirror",
    "build_env_image",
    "ensure_base_image",
    "env_reference",
]
