-- Following: leases of the agents that follow an ask, and the MCP tasks they poll.
--
-- Times are TEXT as in 001 (ask.FormatTime: UTC, microseconds, fixed width), and every row keeps
-- the contract revision that last wrote it.

-- A lease is one holder following one ask until expires_at, unless renewed. Renewing writes the
-- same row again.
CREATE TABLE leases (
    space      TEXT    NOT NULL,
    ask_id     TEXT    NOT NULL,
    holder     TEXT    NOT NULL,
    expires_at TEXT    NOT NULL,
    revision   INTEGER NOT NULL,
    PRIMARY KEY (space, ask_id, holder)
) STRICT, WITHOUT ROWID;

-- ExpiredLeases: every space's leases, oldest expiry first.
CREATE INDEX leases_expiry ON leases (expires_at);

-- A task is an MCP task: result holds the tool's CallToolResult JSON once it is terminal, and a
-- terminal task never changes again.
CREATE TABLE tasks (
    space      TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    ask_id     TEXT    NOT NULL,
    tool       TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    message    TEXT    NOT NULL,
    result     BLOB,
    ttl_ms     INTEGER NOT NULL,
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    expires_at TEXT    NOT NULL,
    revision   INTEGER NOT NULL,
    PRIMARY KEY (space, id),
    CHECK (status IN ('working', 'completed', 'failed', 'cancelled'))
) STRICT;

-- ListTasks: a space's tasks, newest first, ties by id; pages resume after (created_at, id).
CREATE INDEX tasks_by_space ON tasks (space, created_at DESC, id DESC);
