"""Synthesis: scenarios (who arrives when, clicks, thinks, with which network and browser) from a
model; the modeled site as files; exports to httperf, Tsung and Common Log Format."""
from .classes import NETWORKS, ClientClass, Network, Protocol, parse_classes
from .generate import Generator, SynthError, SynthOptions
from .scenario import Scenario, ScenarioError, read_scenario, write_scenario
from .site import Site, resolve_site

__all__ = ["NETWORKS", "ClientClass", "Network", "Protocol", "parse_classes", "Generator",
           "SynthError", "SynthOptions", "Scenario", "ScenarioError", "read_scenario",
           "write_scenario", "Site", "resolve_site"]
