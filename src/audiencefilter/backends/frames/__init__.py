"""The frame back-ends: polars, PySpark and the eager frames narwhals reads (pandas, pyarrow),
over one walker (`core.py`) that holds their shared rules."""
