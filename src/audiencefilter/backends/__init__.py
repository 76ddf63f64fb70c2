"""Back-ends: each walks the one AST and gives the same answer on the same data."""
