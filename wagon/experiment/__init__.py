"""Experiments on real servers: the servers an experiment starts per cell from a filled config
template (``servers``) and the sampling of their own status page during a run (``status``)."""
