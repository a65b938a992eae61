-- A market line's overround, sum(1 / consensus price) - 1, stored beside its hold so the API serves
-- it as stored (schemas/read_models.py `MarketLineRecord.overround`, written by
-- projections/rows.py from domain.devig.overround). Null where the hold is null: the line's values
-- are not served.
--
-- Safe on a database with rows: the column is added nullable, and the lines written before it
-- are filled once from their stored consensus prices, summed in outcome order in float8 as the
-- projector does, so `svc projections verify` finds the rebuild equal. New rows get it from
-- the writer; this is the only place the figure is computed outside domain/.
ALTER TABLE market_lines ADD COLUMN IF NOT EXISTS overround float8;

UPDATE market_lines l
SET overround = (
    SELECT sum(1 / (o.outcome->>'price')::float8 ORDER BY o.n) - 1
    FROM jsonb_array_elements(l.outcomes) WITH ORDINALITY AS o(outcome, n)
)
WHERE l.overround IS NULL AND l.hold IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(l.outcomes) e
                  WHERE jsonb_typeof(e->'price') IS DISTINCT FROM 'number');
