"""Replay results as Parquet (``wagon replay --results r.parquet``): the requests and pages
files' columns, typed, for a research script that loads millions of rows in a fraction of the
CSV's time (docs/benchmarks.md).

A run still writes CSV part files (so ``wagon recover`` settles them the same); ``write_parquet``
converts the assembled CSV when the run is published, block by block (pyarrow's CSV reader, the
columns' types given, never guessed), and ``parquet_frame`` reads a file back to the frame
``read_results`` gives for the CSV of the same run. pyarrow is an extra (``wagon[parquet]``):
without it, asking for Parquet is one line (``require_pyarrow``), before a run starts.
"""
from __future__ import annotations

import importlib.util
import os
from typing import BinaryIO

from .atomic import atomic_path

__all__ = ["PARQUET_SUFFIX", "PARQUET_MAGIC", "is_parquet", "require_pyarrow", "write_parquet", "parquet_frame"]

PARQUET_SUFFIX = ".parquet"
#: the first bytes of a Parquet file
PARQUET_MAGIC = "PAR1"
#: the Parquet type of each column type of the results format
_ARROW = {"int": "int64", "bool": "bool_", "float": "float64", "str": "string"}


def is_parquet(path: str | os.PathLike) -> bool:
    """Whether results at ``path`` are Parquet (by its name, as the replay chooses)."""
    return os.fspath(path).endswith(PARQUET_SUFFIX)


def require_pyarrow(path: str | os.PathLike) -> str | None:
    """One line when ``path`` asks for Parquet and pyarrow is not installed, else None."""
    if is_parquet(path) and importlib.util.find_spec("pyarrow") is None:
        return (f"{os.fspath(path)}: Parquet results need pyarrow "
                "(pip install 'wagon[parquet]'), or give a .csv file")
    return None


def _schema(columns: dict[str, str]):
    """The Arrow schema of the results ``columns``."""
    import pyarrow as pa  # lazy: an optional dependency, only for Parquet results
    return pa.schema([(c, getattr(pa, _ARROW[t])()) for c, t in columns.items()])


def write_parquet(csv_file: BinaryIO, target: str, columns: dict[str, str]) -> None:
    """Write the results CSV ``csv_file`` (binary, header first; ``columns``) to ``target`` as
    Parquet, atomically, a block of rows at a time; ValueError (one line) for a row pyarrow
    cannot type."""
    import pyarrow as pa  # lazy: an optional dependency, only for Parquet results
    import pyarrow.csv as pcsv  # lazy: see above
    import pyarrow.parquet as pq  # lazy: see above
    schema = _schema(columns)
    convert = pcsv.ConvertOptions(column_types=schema, null_values=[""],
                                  strings_can_be_null=False, quoted_strings_can_be_null=False)
    try:
        batches = pcsv.open_csv(csv_file, convert_options=convert)
        with atomic_path(target) as tmp, pq.ParquetWriter(tmp, schema) as out:
            for batch in batches:
                out.write_batch(batch)
    except pa.ArrowInvalid as e:
        raise ValueError(f"{target}: {str(e).splitlines()[0]}") from None


def parquet_frame(path: str, columns_of) -> tuple["pandas.DataFrame", dict[str, str]]:
    """The Parquet results file ``path`` as the typed frame ``read_results`` gives for CSV (bool
    columns as 0/1 integers, as ``checked_frame`` leaves them) and its columns;
    ``columns_of(path, names)`` names them (ResultsError for others). ValueError (one line) for
    a file that is not Parquet or whose columns have other types or missing values."""
    import pyarrow as pa  # lazy: an optional dependency, only for Parquet results
    import pyarrow.parquet as pq  # lazy: see above
    why = require_pyarrow(path)
    if why:
        raise ValueError(why.replace("results need", "results cannot be read without"))
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as e:
        raise ValueError(f"{path}: not a Parquet file ({str(e).splitlines()[0]})") from None
    columns = columns_of(path, table.column_names)
    schema = _schema(columns)
    for field in schema:
        got = table.schema.field(field.name).type
        if got != field.type:
            raise ValueError(f"{path}: column {field.name} is {got}, not {field.type}")
        if field.type != pa.float64() and table[field.name].null_count:
            raise ValueError(f"{path}: column {field.name} has missing values")
    df = table.to_pandas()
    for c, t in columns.items():
        if t in ("str", "bool"):
            df[c] = df[c].astype("string" if t == "str" else "int64")
    return df, columns
