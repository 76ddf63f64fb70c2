"""The use cases: what the service does, one function each, each owning its transactions.

A use case opens the session and its transaction, takes the list's writers' lock, calls the
domain's rules (`write_effects.py`, `custom_fields.py`, `membership/`...), and commits; it answers
domain objects or the read model (`contact_pages.py`), never an HTTP response, and refuses with
the domain's exceptions (`ground/errors.py`). The routes parse a request, call one use case and
shape its answer; the command line and the benchmarks call the same functions, so no step of a
write is written twice.

A write that a client may retry with an `Idempotency-Key` takes a `Writes` (`unit.py`): the
use case still says what runs in its transaction, and the HTTP floor records the answer in that
same transaction. Everything else runs through `in_transaction(database)`.
"""
