"""SQL over the read models, one module per resource. Always parameterised; the schema name
(quoted) comes only from `api.conventions.schema_of(request)`. Never reads the internal per-book price table."""
