"""The command line: the `audiencefilter-service` entry point, the server and the demo.

`main` parses the commands (keys, accounts, migrate, serve, demo); `server` runs uvicorn on a
migrated database; `demo` seeds an embedded database and serves it.
"""
