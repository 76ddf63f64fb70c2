"""The JSON form of a filter (Prisma's where clause): strict decoding, reading into the AST,
writing canonical JSON, positions of paths in the text, and the JSON Schema."""
