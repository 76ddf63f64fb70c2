"""Other tools' filter formats, read into the one AST and written back from it.

Each format module exposes `read(source, schema) -> Node` and `write(node, schema) -> object`,
raising `FilterError` for input it cannot read and for a node with no faithful form in the
format. The formats are readers and writers like `where/` and `text/`: they build conditions
through `language/conditions.py` and never import a back-end.
"""
