"""Benchmarks: audiencefilter next to the tools one would use instead (`python -m benchmarks.run`).

Modules: `data` (seeded synthetic contacts), `filters` (the filters and their hand
translations), `engines` (each competitor's load and run), `micro` (per-call costs of parse,
compile and translations), `cli_memory` (`audiencefilter eval` peak memory), `pgserver` (a
throw-away PostgreSQL), `timing`, `results`, `report` and `run`; `claims`, every claim of the
performance pages (docs/performance*.md) measured again through the module that printed it
(`python -m benchmarks.claims`).
"""
