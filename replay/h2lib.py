"""The HTTP/2 protocol library the engine runs on: ``jh2`` when it is installed, else ``h2``.

jh2 (``pip install 'wagon-workload[h2fast]'``) is the maintained fork of h2 that urllib3-future
and niquests use: the same state machine and API under another name, with HPACK compiled
instead of pure Python: about twice the engine's HTTP/2 requests/s (docs/benchmarks.md), the
same requests to the server. This module only chooses; ``replay.http2`` imports the names
from here.
"""
from __future__ import annotations

import importlib

__all__ = ["NAME", "ConnectionTerminated", "DataReceived", "ErrorCodes", "GoAwayFrame",
           "H2Configuration", "H2Error", "H2State", "RemoteSettingsChanged", "ResponseReceived",
           "SettingCodes", "Settings", "StreamEnded", "StreamReset"]

try:
    importlib.import_module("jh2")
    NAME, _FRAMES = "jh2", "jh2.hyperframe.frame"
except ImportError:
    NAME, _FRAMES = "h2", "hyperframe.frame"


def _module(name: str):
    return importlib.import_module(f"{NAME}.{name}")


H2Configuration = _module("config").H2Configuration
H2State = _module("connection").H2Connection
ErrorCodes = _module("errors").ErrorCodes
H2Error = _module("exceptions").H2Error
SettingCodes, Settings = _module("settings").SettingCodes, _module("settings").Settings
_events = _module("events")
ConnectionTerminated, DataReceived = _events.ConnectionTerminated, _events.DataReceived
RemoteSettingsChanged, ResponseReceived = _events.RemoteSettingsChanged, _events.ResponseReceived
StreamEnded, StreamReset = _events.StreamEnded, _events.StreamReset
GoAwayFrame = importlib.import_module(_FRAMES).GoAwayFrame
