"""Reports: PNG plots of fits and replays (``plots``), self-contained HTML reports (``html``)."""
