"""Tables as pandas DataFrames with the types docs/python.md documents; pandas is imported only
when a table is asked for, so the rest of the package works without it."""

from __future__ import annotations

from typing import Any, Mapping


def pandas():
    """The pandas module, or an ImportError saying how to get it."""
    try:
        import pandas
    except ImportError as error:
        raise ImportError(
            "fairshare's tables are pandas DataFrames: pip install pandas "
            "(or pip install 'fairshare[pandas]'); the results' dicts hold the same numbers"
        ) from error
    return pandas


def frame(rows: list[dict[str, Any]], schema: Mapping[str, str]):
    """A DataFrame of `rows` with the columns of `schema`, in its order and of its types
    (``int64``, ``Int64`` for a count that may be missing, ``float64``, ``string``,
    ``object`` for lists), so that an empty table has them too."""
    pd = pandas()
    return pd.DataFrame(rows, columns=list(schema)).astype(dict(schema))
