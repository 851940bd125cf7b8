-- list_open_asks gives an agent back every ask it raised that closed lately, however many other
-- asks of the space closed since: an index of closed asks by the credential that raised them.
CREATE INDEX asks_closed_by ON asks (space, credential_id, closed_at DESC) WHERE closed_at IS NOT NULL;

-- The credential of each turn of an ask's thread (ask.TurnCredentials): a JSON array parallel to
-- the thread, or '' when no turn names one. The contract's thread names no agent, so it is kept
-- beside the body, not in it.
ALTER TABLE asks ADD COLUMN turns TEXT NOT NULL DEFAULT '';
