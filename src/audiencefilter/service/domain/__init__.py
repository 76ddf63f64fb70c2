"""The rules of the service: accounts, audience filters, membership, events, ranking, webhooks.

Modules here decide; they do not speak HTTP (they raise the ground's errors, which `http/` maps
to responses) and they do not own the schema (`db/`). They stand on `ground/` and `db/` only.
"""
