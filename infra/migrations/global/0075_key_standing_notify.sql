-- A key's standing on the Wire depends on its scopes and on its account's plan, not only on
-- revocation: announce changes to either on the same channel (payload: the key ID), so every API
-- process re-reads the key, drops it from its cache and closes or narrows its Wire connections.
CREATE TRIGGER api_keys_notify_scopes
    AFTER UPDATE OF scopes ON access.api_keys
    FOR EACH ROW WHEN (OLD.scopes IS DISTINCT FROM NEW.scopes) EXECUTE FUNCTION public.svc_key_changed();

CREATE FUNCTION public.svc_account_plan_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('svc_keys', k.id) FROM access.api_keys k WHERE k.account_id = NEW.id;
    RETURN NULL;
END $$;

CREATE TRIGGER accounts_notify_plan
    AFTER UPDATE OF plan ON access.accounts
    FOR EACH ROW WHEN (OLD.plan IS DISTINCT FROM NEW.plan) EXECUTE FUNCTION public.svc_account_plan_changed();
