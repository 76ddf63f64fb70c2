"""SQL back-ends: SQLAlchemy expressions and SQL text, over dialects described as data."""
