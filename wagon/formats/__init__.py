"""The file formats, which are the contracts between stages: each module holds the one reader
and the one writer of its format, and knows nothing of the stages on either side.

- ``model``: the fitted traffic model (``wagon fit`` writes it, ``wagon synth`` reads it);
- ``scenario``: sessions to replay, with their client ``classes`` and the ``site`` they request
  (``wagon synth`` writes it; ``wagon replay``, ``serve``, ``site build`` and ``export`` read it);
- ``results``: every request and page a replay made (``wagon replay`` writes it; reports,
  comparisons and Hurst estimates read it), checked by ``results_check`` (the CSV files) and
  ``run_schema`` (the run file's JSON Schema, published in docs/formats.md).

Nothing here imports a stage: replay reads scenarios without SciPy, synthesis reads models
without the log parser.
"""
