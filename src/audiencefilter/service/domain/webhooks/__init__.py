"""Webhooks: a list's events delivered as signed HTTP POSTs to the endpoints it registers.

`signing` (the Standard Webhooks signature), `targets` (which URLs may be called at all),
`schedule` (when a failed delivery is tried again), `dispatch` (outbox events to deliveries,
claims, results, all in the database), `turns` (which account's delivery a free sending thread
takes), `sender` (one HTTP attempt, within its deadline) and `worker` (the loop that runs them,
as a thread of the service or as its own process).
"""
