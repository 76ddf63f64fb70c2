"""HTTP plumbing shared by every route, independent of any resource.

Middlewares, rate limits, request logs, CORS origins, the client address, idempotency records,
the error shapes and the JSON response class. Nothing here knows what a list or a contact is,
except where a policy needs the database (origins, idempotency records).
"""
