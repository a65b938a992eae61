"""Access rules shared by the API and the Wire: key format and storage, plans and scopes,
rate windows, billing periods, credits and their leases, client addresses, response headers.

Both `api` and `wire` import this package; it imports neither. The API's Litestar adapters
(the access middleware, its OpenAPI plugin and the per-request service) live in `api/access`.
"""
