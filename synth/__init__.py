"""Synthesis: scenarios (who arrives when, clicks, thinks, with which network and browser) from a
model; the modeled site; exports to httperf, Tsung and Common Log Format.

Reads the model format (``wagon.formats.model``), writes the scenario format
(``wagon.formats.scenario``); knows nothing of logs or of the replay engine. The generator
(``Generator``, ``synthesize``, ``SynthError``, ``SynthSummary``) draws from SciPy's laws and is
imported on first use, so that ``wagon serve`` and ``wagon site`` start without SciPy."""
from __future__ import annotations

import importlib

from .options import SynthOptions
from .profiles import Profile, ProfileError, parse_profile
from .site import ModelSite, resolve_site

__all__ = ["Generator", "SynthError", "SynthOptions", "SynthSummary", "synthesize", "Profile",
           "ProfileError", "parse_profile", "ModelSite", "resolve_site"]

_GENERATE = ("Generator", "SynthError", "SynthSummary", "synthesize")


def __getattr__(name: str):
    if name not in _GENERATE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(".generate", __name__), name)
