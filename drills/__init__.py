"""Fault and load drills for the reference service: `python -m drills [--fast] [--only NAME...]`.

Each drill starts what it needs on 127.0.0.1 (the service as a child process, and throw-away
PostgreSQL or Redis servers through the test suite's helpers), does something a production
service must survive, checks what the issue promises, stops everything it started, and returns
one row of the summary table. Every size and duration is bounded; `--fast` shrinks them for CI.

Modules: `common` (rows, sizes, missing tools), `service` (the service process, keys, seeding),
`wrk` (running wrk and reading its report), `crash`, `outage`, `limits`, `load`, `mixed`,
`fuzzing` (the parsers and schemathesis), `fuzz_target` (the atheris entry point) and `runner`.
"""
