"""Request and response models, and the views that render resources as JSON-ready dicts.

`resources` covers lists, contacts and actions; `audiences` the audience bodies; `views` builds
the response bodies straight from rows, matching the response models (checked against OpenAPI).
"""
