-- What a market line's values are (docs/odds.md, "Consensus and its minimum"): `consensus` of at
-- least two bookmakers, a source's `published_line` (fewer bookmakers), or `too_few_books`: one
-- bookmaker's price is not a consensus, so the line's numbers are null and `methods` says why.
ALTER TABLE market_lines ADD COLUMN basis text NOT NULL DEFAULT 'consensus';
