"""The language: the AST's nodes, the field catalogue, values, relative dates, limits and the
visitor. It imports nothing else of the library; everything else imports it."""
