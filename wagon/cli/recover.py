"""``wagon recover``: the results of a replay whose parent process died, merged and summarised
(imports no SciPy: see wagon.replay)."""
from __future__ import annotations

import click

from ..formats.results import ResultsError
from ..formats.results_parquet import require_pyarrow
from ..formats.scenario import ScenarioError
from ..replay import ReplayError, exit_status
from ..replay.record import summary_text
from ..replay.recover import recover
from .common import WagonError, not_wagon, write_error
from .replay import EXIT_HELP


@click.command("recover", epilog=EXIT_HELP)
@click.argument("results")
def command(results) -> None:
    """Merge the part files of RESULTS (a replay's --results, left by a killed run), count the
    requests its processes had not written as not started, and write the run's summary to its
    run file (RESULTS' .run.json)."""
    not_wagon([results], "replay results")
    why = require_pyarrow(results)
    if why:
        raise WagonError(why)
    try:
        summary = recover(results)
    except (ReplayError, ResultsError, ScenarioError) as e:
        raise WagonError(str(e)) from None
    except OSError as e:
        raise write_error(results, e, "the part files are kept: run wagon recover again once "
                          "there is room") from None
    click.echo(summary_text(summary))
    click.get_current_context().exit(exit_status(summary))
