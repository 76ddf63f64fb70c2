"""The HTTP surface of the service: what a client sees.

`deps` resolves keys, lists and settings for each request; `routes/` holds one router per resource;
`schemas/` the pydantic models in and out and the views that build response bodies by hand;
`openapi` the published document. Rules live in `domain/`, storage in `db/`.
"""
