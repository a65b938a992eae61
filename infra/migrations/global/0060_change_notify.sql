-- Notifications the API processes LISTEN to, so they need not ask the database on every call.
-- Channel names are in infra/channels.py.

-- A key's revocation (or removal) reaches every API process at commit: each drops the key from
-- its in-process cache at once. Any path that revokes a key fires this, not only `svc keys revoke`.
CREATE FUNCTION public.svc_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('svc_keys', coalesce(NEW.id, OLD.id));
    RETURN NULL;
END $$;

CREATE TRIGGER api_keys_notify
    AFTER UPDATE OF revoked_at ON access.api_keys
    FOR EACH ROW WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at) EXECUTE FUNCTION public.svc_key_changed();
CREATE TRIGGER api_keys_notify_delete
    AFTER DELETE ON access.api_keys FOR EACH ROW EXECUTE FUNCTION public.svc_key_changed();

-- A write to a served read-model table: one notification per table per transaction (Postgres
-- folds identical notifications of one transaction into one), sent at commit, on the channel
-- of the table's schema. Statement-level, so a batch of any size costs one call. Scratch
-- schemas of a rebuild notify on their own channel, which nobody listens to; the swap that
-- makes one the dataset's schema notifies the dataset's channel itself (projections/rebuild.py).
CREATE FUNCTION public.svc_read_model_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('svc_read_models.' || TG_TABLE_SCHEMA, TG_TABLE_NAME);
    RETURN NULL;
END $$;
