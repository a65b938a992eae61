"""The one error catalog (api/problems.py) and the sources agree: every code a module raises is
in the catalog, every catalog code is raised somewhere or reserved for a named feature (and then
raised nowhere), docs/api.md lists the reserved ones, and each help entry says reserved exactly
when the code is. Found by scanning the sources, so a new code, or a code no longer raised,
fails here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from api.problems import CATALOG, RESERVED

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("api", "wire", "access", "calc", "cli")
# where codes are declared or only documented (OpenAPI responses), not raised
NOT_RAISING = {"api/problems.py", "api/openapi.py", "api/routes/_docs.py", "api/access/docs.py"}
DOC_CALLS = {"problem_responses"}
# the calls that raise or answer with a problem, by the position of their code argument
RAISING_CALLS = {"ProblemError": 0, "build_problem": 0, "_problem_event": 0, "Refused": 0,
                 "problem_response": 1, "error": 0}
SNAKE = re.compile(r"^[a-z]+(_[a-z]+)+$")


def _name(call: ast.Call) -> str | None:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)


def _scan() -> tuple[dict[str, list[str]], list[str]]:
    """Catalog codes as string constants outside declarations and documentation, by place; and
    codes given to a raising call that are not in the catalog."""
    raised: dict[str, list[str]] = {}
    unknown: list[str] = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            where = str(path.relative_to(ROOT))
            if where in NOT_RAISING:
                continue
            tree = ast.parse(path.read_text())
            skip: set[int] = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and _name(node) in DOC_CALLS:
                    skip |= {id(n) for n in ast.walk(node)}
                elif isinstance(node, ast.Dict):  # a table keyed by code (messages, close codes)
                    skip |= {id(k) for k in node.keys if k is not None}
                elif isinstance(node, ast.Compare):  # a test of a code, not a raise
                    skip |= {id(n) for n in ast.walk(node)}
                if isinstance(node, ast.Call) and _name(node) in RAISING_CALLS:
                    at = RAISING_CALLS[_name(node)]
                    arg = node.args[at] if len(node.args) > at else None
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and SNAKE.match(arg.value) \
                            and arg.value not in CATALOG:
                        unknown.append(f"{where}:{node.lineno} {arg.value}")
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and node.value in CATALOG and id(node) not in skip:
                    raised.setdefault(node.value, []).append(f"{where}:{node.lineno}")
    return raised, unknown


def test_every_code_raised_is_in_the_catalog_and_every_unreserved_code_is_raised():
    raised, unknown = _scan()
    assert unknown == [], f"codes raised that the catalog lacks: {unknown}"
    assert set(RESERVED) <= set(CATALOG)
    never = sorted(set(CATALOG) - set(raised) - set(RESERVED))
    assert never == [], f"catalog codes no module raises: raise them, or reserve them for a named feature: {never}"
    both = {code: raised[code] for code in sorted(set(RESERVED) & set(raised))}
    assert both == {}, f"reserved codes that are raised: take them out of RESERVED: {both}"
    assert all(len(feature) > 10 for feature in RESERVED.values())  # a named feature, not a placeholder


def test_the_docs_list_the_reserved_codes():
    text = (ROOT / "docs" / "api.md").read_text()
    table = dict(re.findall(r"^\| `([a-z_]+)` \| (.+?) \|$", text.split("## Error catalog", 1)[1].split("\n## ", 1)[0],
                            re.M))
    assert table == RESERVED


def test_each_help_entry_says_reserved_exactly_when_the_code_is():
    wrong = []
    for code in CATALOG:
        entry = (ROOT / "content" / "reference" / "help" / f"problem-{code.replace('_', '-')}.md").read_text()
        summary = re.search(r'^summary = "(.*)"$', entry, re.M).group(1)
        says_reserved = "reserved" in summary.lower() or "raises it today" in entry or "not raise it today" in entry
        if says_reserved != (code in RESERVED):
            wrong.append(code)
    assert wrong == [], f"help entries that say reserved when the code is raised, or the reverse: {wrong}"


def test_every_raised_code_is_expected_by_some_test():
    tests = "\n".join(p.read_text() for folder in ("integration", "e2e", "unit")
                      for p in (ROOT / "tests" / folder).rglob("*.py") if p.name != Path(__file__).name)
    untested = [code for code in CATALOG if code not in RESERVED and not re.search(rf"[\"']{code}[\"']", tests)]
    assert untested == [], f"codes raised that no test names: {untested}"
