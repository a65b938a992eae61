"""Response resources of the read API: msgspec Structs and the pure builders that
turn read-model rows into them. No I/O here; SQL lives in `api.queries`.
"""
