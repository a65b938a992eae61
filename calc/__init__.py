"""The calculations (`POST /v1/calculations/{name}`, `svc calc`, the answers' odds figures): their
request and response bodies (`calc.models`) and the runner (`calc.run`). Pure: the domain's maths
behind msgspec bodies, no web framework, no I/O, so the API (its HTTP adapter), the answers and
the CLI import the same code."""
