"""Consensus and no-vig per market line (the rules of the projection issue, in one place).

Eligible quotes: quotes that can price the line, of books that are neither exchanges nor DFS
operators (`schemas.bookmakers`) and not suspended, outside exchange markets, offering the
line's usual outcomes (the outcome set most books quote) at the line's point, quoted within the
window of the newest such quote (event time). With at least MIN_BOOKS bookmakers among them:
per book the no-vig probabilities; per outcome the median across books, renormalised to sum to
1; the median decimal price; hold = 1 - 1 / sum(1 / consensus price); books = eligible
bookmakers. With fewer, the line is served from a published line (a source that is not a
bookmaker, such as nflverse) when one is eligible, else its values are not served at all: one
bookmaker's price under another name is not a consensus. Pure: no I/O, no wall clock; inputs
are iterated in book order, so the same line state always gives the same floats.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence, cast

from domain.devig import DEFAULT_METHOD, METHODS, FloatDevig, devig_floats
from projections.lines import BookQuote, Consensus, LineState
from projections.state import Suspension
MIN_BOOKS = 2  # fewer bookmakers than this on a line: no consensus is served (one book's price is not one)
OTHER_METHODS = tuple(m for m in METHODS if m != DEFAULT_METHOD)


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    if n % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2.0


@lru_cache(maxsize=1 << 17)
def devig(method: str, odds: tuple[float, ...]) -> FloatDevig | None:
    """One book's no-vig probabilities (memoised: books repeat the same prices all the time)."""
    try:
        return devig_floats(method, odds)
    except (ValueError, ArithmeticError, NotImplementedError):
        return None


def is_suspended(quote: BookQuote, suspend_all: Suspension | None, suspend_book: Mapping[str, Suspension]) -> bool:
    """Suspended when the newest suspend/reopen for the market or the book is a suspension that
    is newer than the quote (a book quoting again after a suspension is open again)."""
    latest = suspend_all
    own = suspend_book.get(quote.book)
    if own is not None and (latest is None or own.stamp > latest.stamp):
        latest = own
    return latest is not None and latest.suspended and latest.stamp > quote.origin.stamp


def eligible_quotes(
    books: Mapping[str, BookQuote],
    suspend_all: Suspension | None,
    suspend_book: Mapping[str, Suspension],
    window_us: int,
) -> list[BookQuote]:
    """The books that count toward a line's consensus, in book order."""
    check = suspend_all is not None or bool(suspend_book)  # the common case: nothing ever suspended
    candidates: list[BookQuote] = []
    first: tuple[str, ...] = ()
    uniform = True
    newest = oldest = 0
    # one pass (this runs for every quote): the candidates, whether they all offer the same
    # outcomes, and the span of their quote times
    for q in books.values():
        if not q.may_count or (check and is_suspended(q, suspend_all, suspend_book)):
            continue  # no price, an exchange's market, not a consensus input (`BookQuote`); suspended
        ts = q.ts
        if not candidates:
            first, newest, oldest = q.selections, ts, ts
        else:
            if uniform and q.selections != first:
                uniform = False
            if ts > newest:
                newest = ts
            elif ts < oldest:
                oldest = ts
        candidates.append(q)
    if not candidates:
        return []
    if not uniform:
        # the line's outcome set: the one most books quote (ties: more outcomes, then by name)
        counts = Counter(q.selections for q in candidates)
        usual = max(counts, key=lambda s: (counts[s], len(s), s))
        candidates = [q for q in candidates if q.selections == usual]
        newest = max(q.ts for q in candidates)
        oldest = min(q.ts for q in candidates)
    oldest_allowed = newest - window_us
    if oldest >= oldest_allowed:
        return candidates
    return [q for q in candidates if q.ts >= oldest_allowed]


def _medians(columns: Iterable[Sequence[float]], n: int) -> list[float]:
    """Median of each column of `n` values (inlined: this runs for every quote)."""
    mid = n // 2
    if n % 2:
        return [sorted(c)[mid] for c in columns]
    return [(c[mid - 1] + c[mid]) / 2.0 for c in map(sorted, columns)]


def _median_probabilities(columns: Iterable[Sequence[float]], n: int) -> tuple[float, ...]:
    medians = _medians(columns, n)
    total = sum(medians)
    return tuple(m / total for m in medians)


def consensus_inputs(eligible: Sequence[BookQuote]) -> tuple[str, int, list[BookQuote]]:
    """(basis, bookmakers, the quotes the line's values come from), from its eligible quotes:
    at least MIN_BOOKS bookmakers make a consensus (published lines left out); fewer, the
    published line(s) of a source that is not a bookmaker; else the one bookmaker, whose numbers
    decide nothing but which line is main and are never shown."""
    books = [q for q in eligible if not q.published]
    if len(books) >= MIN_BOOKS:
        return "consensus", len(books), books
    if len(books) < len(eligible):
        return "published_line", len(books), [q for q in eligible if q.published]
    return "too_few_books", len(books), books


def consensus(candidates: Sequence[BookQuote]) -> Consensus | None:
    """The line's consensus under the default devig method, or None without books."""
    if not candidates:
        return None
    basis, n_books, eligible = consensus_inputs(candidates)
    return _consensus_of(eligible, n_books, basis, max([q.ts for q in eligible]))


def _consensus_of(eligible: list[BookQuote], n_books: int, basis: str, newest: int) -> Consensus:
    """The consensus of the quotes its values come from (`consensus_inputs`), at least one;
    `newest`: their newest quote time. (A list, not any sequence: compiled, a comprehension
    over a list is preallocated, over a sequence it iterates and appends.)"""
    n = len(eligible)
    # per outcome, the median across books (written out: this runs for every quote); the
    # arithmetic and its order are those of `median` and `_median_probabilities`
    mid = n // 2
    odd = n % 2 == 1
    first = eligible[0].outcomes  # names and points from the first book in book order
    k = len(first)
    # eligible quotes all have odds and probabilities (`eligible_quotes`), as many as `first`.
    # The columns are typed Any, not float: compiled, a float read from a tuple is unboxed and
    # boxed again (a new object) to go into a list, 32 allocations per quote of eight books; as
    # Any the lists hold the quotes' own floats (the same IEEE double arithmetic either way).
    if k == 2:  # most lines: four columns as comprehensions (preallocated when compiled)
        p0: list[Any] = [cast(tuple[Any, ...], q.probabilities)[0] for q in eligible]
        p1: list[Any] = [cast(tuple[Any, ...], q.probabilities)[1] for q in eligible]
        d0: list[Any] = [cast(tuple[Any, ...], q.odds)[0] for q in eligible]
        d1: list[Any] = [cast(tuple[Any, ...], q.odds)[1] for q in eligible]
        p0.sort()
        p1.sort()
        d0.sort()
        d1.sort()
        if odd:
            m0, m1, x0, x1 = p0[mid], p1[mid], d0[mid], d1[mid]
        else:
            m0 = (p0[mid - 1] + p0[mid]) / 2.0
            m1 = (p1[mid - 1] + p1[mid]) / 2.0
            x0 = (d0[mid - 1] + d0[mid]) / 2.0
            x1 = (d1[mid - 1] + d1[mid]) / 2.0
        # sum() of two positive floats from int 0 is their sum: 0 + m0 is m0 exactly
        total = m0 + m1
        q0, q1 = m0 / total, m1 / total
        fair = 0.5
        return Consensus(n_books, first, [x0, x1], [q0, q1], abs(q0 - fair) + abs(q1 - fair), newest, basis)
    ps: list[list[Any]] = [[] for _ in range(k)]
    ds: list[list[Any]] = [[] for _ in range(k)]
    for q in eligible:
        pq = cast(tuple[Any, ...], q.probabilities)
        dq = cast(tuple[Any, ...], q.odds)
        for i in range(k):
            ps[i].append(pq[i])
            ds[i].append(dq[i])
    medians: list[Any] = []
    prices: list[Any] = []
    for i in range(k):
        pc = ps[i]
        dc = ds[i]
        pc.sort()
        dc.sort()
        if odd:
            medians.append(pc[mid])
            prices.append(dc[mid])
        else:
            medians.append((pc[mid - 1] + pc[mid]) / 2.0)
            prices.append((dc[mid - 1] + dc[mid]) / 2.0)
    total = sum(medians)
    probabilities = [m / total for m in medians]
    fair = 1.0 / len(prices)
    # the outcomes themselves are built when a row or a delta shows them (`Consensus.outcomes`)
    return Consensus(n_books, first, prices, probabilities, sum([abs(p - fair) for p in probabilities]),
                     newest, basis)


@lru_cache(maxsize=1 << 16)
def devig_others(odds: tuple[float, ...]) -> tuple[FloatDevig | None, ...]:
    """One book's results under every non-default method (memoised by its prices)."""
    return tuple(devig(method, odds) for method in OTHER_METHODS)


def other_methods(odds: Sequence[tuple[float, ...]]) -> dict[str, tuple[tuple[float, ...] | None, dict]]:
    """Consensus no-vig probabilities under every other method, with notes for the read model,
    from the eligible books' decimal odds (in book order).

    Books whose result falls outside (0, 1) or whose solver did not converge are left out of
    that method's median and named in its flags; a line no book can be devigged on by a method
    has no probabilities under it.
    """
    per_book = [devig_others(o) for o in odds]
    out = {}
    for i, method in enumerate(OTHER_METHODS):
        usable: list[FloatDevig] = []
        flags: set[str] = set()
        for results in per_book:
            r = results[i]
            if r is None:
                flags.add("failed")
            elif not r.in_range:
                flags.add("out_of_range")
            elif not r.converged:
                flags.add("not_converged")
            else:
                usable.append(r)
        message = None
        if flags:
            message = (
                f"{len(odds) - len(usable)} of {len(odds)} books left out: their {method} result was "
                f"{' or '.join(sorted(f.replace('_', ' ') for f in flags))}"
            )
        parameters = [r.parameter for r in usable if r.parameter is not None]
        note = {
            "books": len(usable),
            "flags": sorted(flags),
            "message": message,
            "parameter": median(parameters) if parameters else None,
        }
        probabilities = (
            _median_probabilities(zip(*[r.probabilities for r in usable]), len(usable)) if usable else None
        )
        out[method] = (probabilities, note)
    return out


def pick_main(lines: dict[str, LineState], window_us: int) -> str | None:
    """The main line: among lines whose newest eligible quote is within the staleness window of
    the market's newest (event time), a line whose values are served before one that is not,
    then the one quoted by the most books; ties: the newest quotes, then closest to even, then
    the lower point. A stale line never decides, however many books
    it had (a preseason quote against the closing line). (`lines` a dict, not any Mapping:
    compiled, a dict's values are iterated natively, a Mapping's through a method call and an
    iterator; this runs for every quote.)"""
    newest = 0
    for line in lines.values():
        c = line.consensus
        if c is not None and c.newest > newest:
            newest = c.newest
    oldest_allowed = newest - window_us
    best: str | None = None
    best_line: LineState | None = None
    for key, line in lines.items():
        c = line.consensus
        if c is None or c.newest < oldest_allowed:
            continue
        if best_line is None or _ranks_before(c, line, key, best_line, cast(str, best)):
            best, best_line = key, line
    return best


def _ranks_before(c: Consensus, line: LineState, key: str, other: LineState, other_key: str) -> bool:
    """Whether `line` ranks before `other` for main line (`c`: its consensus; `other`'s is not
    None): (not served, -books, -newest, evenness, point or 0, key) compared as tuples would
    be, equal items by identity or ==, without building them (this runs for every line of a
    market on every quote)."""
    o = cast(Consensus, other.consensus)
    if c.served != o.served:
        return c.served
    if c.books != o.books:
        return c.books > o.books
    if c.newest != o.newest:
        return c.newest > o.newest
    a: Any = c.evenness
    b: Any = o.evenness
    if a is not b and a != b:
        return bool(a < b)
    p: Any = line.point if line.point is not None else 0
    q: Any = other.point if other.point is not None else 0
    if p is not q and p != q:
        return bool(p < q)
    return key < other_key


def line_consensus(line_books: dict[str, BookQuote], suspend_all: Suspension | None,
                   suspend_book: dict[str, Suspension], window_us: int) -> Consensus | None:
    """`consensus(eligible_quotes(...))`, with a shortcut for the line of every quote of a
    replay: nothing suspended, every book that may count offering the same outcomes within the
    window, no published line. Its candidates are then the eligible quotes and the consensus
    inputs as they are (the same list, the same order), so only the lists are not built twice.
    (Dicts, not any Mappings: compiled, a dict's values are iterated natively.)"""
    if suspend_all is not None or suspend_book:
        return consensus(eligible_quotes(line_books, suspend_all, suspend_book, window_us))
    eligible: list[BookQuote] = []
    first: tuple[str, ...] = ()
    newest = oldest = 0
    plain = True
    for q in line_books.values():
        if not q.may_count:
            continue
        ts = q.ts
        if not eligible:
            first, newest, oldest = q.selections, ts, ts
        else:
            selections = q.selections
            if selections is not first and selections != first:  # quotes of equal prices share theirs
                plain = False
            if ts > newest:
                newest = ts
            elif ts < oldest:
                oldest = ts
        if q.published:
            plain = False
        eligible.append(q)
    if not plain or oldest < newest - window_us:
        return consensus(eligible_quotes(line_books, suspend_all, suspend_book, window_us))
    if not eligible:
        return None
    n = len(eligible)
    return _consensus_of(eligible, n, "consensus" if n >= MIN_BOOKS else "too_few_books", newest)
