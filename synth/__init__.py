"""Synthesis: scenarios (who arrives when, clicks, thinks, with which network and browser) from a
model; the modeled site; exports to httperf, Tsung and Common Log Format.

Reads the model format (``wagon.formats.model``), writes the scenario format
(``wagon.formats.scenario``); knows nothing of logs or of the replay engine."""
from .generate import Generator, SynthError, SynthOptions, SynthSummary, synthesize
from .profiles import Profile, ProfileError, parse_profile
from .site import ModelSite, resolve_site

__all__ = ["Generator", "SynthError", "SynthOptions", "SynthSummary", "synthesize", "Profile",
           "ProfileError", "parse_profile", "ModelSite", "resolve_site"]
