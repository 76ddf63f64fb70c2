"""The in-memory back-end: a filter compiled once into one Python function over a record,
its accelerators, relation conditions and the clock's next change."""
