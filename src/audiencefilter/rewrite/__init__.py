"""Rewrites of the AST into equivalent trees: `simplify` (smaller) and `lower` (the normal form
every back-end takes)."""
