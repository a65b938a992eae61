"""The calculations as the API runs them: `calc.run`, whose refusals are answered as problems.

The runner is not API code (the CLI runs it too), so it raises `calc.run.Refused`; every API
caller that may be refused (the routes, the answers) calls `calculate` here, which raises the
same refusal as a `ProblemError` of the same code, detail and param.
"""

from __future__ import annotations

from datetime import datetime

from api.problems import ProblemError
from calc import models as m
from calc import run


def calculate(name: str, request: m.Request, as_of: datetime | None = None) -> m.Calculation:
    """`calc.run.calculate`; raises ProblemError on inputs the maths refuses."""
    try:
        return run.calculate(name, request, as_of)
    except run.Refused as exc:
        raise ProblemError(exc.code, exc.detail, param=exc.param) from None
