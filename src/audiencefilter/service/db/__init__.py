"""Persistence: the engine, the models, the migrations and the shared queries.

Alembic migrations ship inside the package (`migrations/`), so an installed wheel can upgrade its
own database; `migrate` drives them from Python.
"""
