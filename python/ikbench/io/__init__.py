"""Reading and storing: the results directory (schema, models, reader), bounded safe reads and
atomic writes, redaction, hashing, the subprocess runner, and the history store. Every SQL
statement of the package lives in this layer (store, store_queries, store_exchange). Imports
nothing from the layers above (analysis, render, cli)."""
