"""The rules of the service: accounts, keys, audience filters, contact fields, membership, ranking.

Modules here decide; they do not speak HTTP (beyond raising the service's errors) and they do not
own the schema (`db/`). Names avoid the library's own (`audience_filters`, `contact_fields`).
"""
