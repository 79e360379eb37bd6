"""``--cluster``: waiting for the segments to get ready says nothing of its own. The wait
asked the scheduler for the ready queue's next item with a 0.5 s timeout; each timeout was
logged by the scheduler as an error with a traceback ("Exception while handling op
queue_get"), on the terminal of a ``local:N`` run whose worker took longer (a loaded machine,
a script's import). The observer: Dask's own log records, in an in-process cluster whose
segments get ready 0.8 s late."""
from __future__ import annotations

import logging
import time

import pytest

distributed = pytest.importorskip("distributed")

from wagon.replay.cluster import _await_ready  # noqa: E402


def _late(run: str) -> None:
    time.sleep(0.8)
    distributed.Queue(f"ready-{run}").put(1)


def test_waiting_for_late_segments_logs_no_error(caplog):
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        futures = [client.submit(_late, "x", pure=False) for _ in range(2)]
        with caplog.at_level(logging.ERROR, logger="distributed"):
            _await_ready(client, distributed.Queue("ready-x", client),
                         futures, distributed.Event("stop-x", client))
        assert all(f.result() is None for f in futures)
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, errors
