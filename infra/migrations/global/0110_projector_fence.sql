-- The projector's fence inside its batch statement (projections/pg_writer.py): a batch statement
-- runs on its own (autocommit, one round trip: no BEGIN, no COMMIT), so a tracking row that moved
-- without the projector must fail the statement itself, which rolls the whole batch back; the
-- projector knows this error by its SQLSTATE and reloads its state (StaleState).
CREATE FUNCTION public.svc_projector_fence(moved bigint, expected bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    IF moved IS DISTINCT FROM expected THEN
        RAISE EXCEPTION 'tracking moved without this projector (or a new generation): % of % partitions', moved, expected
            USING ERRCODE = 'SVF01';
    END IF;
    RETURN moved;
END $$;
