package ask

import (
	"context"
	"time"
)

// Socket connections held by someone else: on AWS, API Gateway holds the inbox's WebSockets and
// Loopback only knows them by id. The $connect function records each one with the space its
// ticket (or token) opened; the stream fan-out lists a space's connections to post each change
// to; $disconnect, or a post answered "gone", removes one. The local binary holds its sockets
// itself (httpapi and the hub) and needs none of this. See docs/design/events.md, "On AWS".
//
// A connection starts not ready: its first frame must be the snapshot, and until that has been
// sent nothing else may be. A change that finds a connection not ready is noted on it instead
// (MarkMissed); whoever sends the snapshot then marks it ready, takes the noted ask ids in the
// same write (MarkReady), and sends those asks as they are after it. Since each of the two is
// one atomic write on the connection, every change committed after the connection was recorded
// is either noted (and sent after the snapshot) or finds it ready (and is sent directly).
//
// How long a connection is kept (its ExpiresAt) is API Gateway's business: wsapi.ConnectionTTL.

// MaxMissed bounds how many ask ids a connection that is not ready yet notes. A connection that
// would note more is past saving (its snapshot has not gone out for that many changes): it is
// removed, and its client reconnects for a fresh snapshot.
const MaxMissed = 100

// Connection is a WebSocket held by API Gateway: its id, the space it follows and who opened it.
type Connection struct {
	ID    string
	Space string
	Actor Actor
	// CredentialID is the credential that opened the connection: revoking it disconnects it.
	CredentialID string
	ConnectedAt  time.Time
	ExpiresAt    time.Time
	// Ready is set once the snapshot has been sent: from then on changes go straight to it.
	Ready bool
	// Since is the watermark the client offered (the newest updatedAt it holds, contract revision
	// 6), nil if none: its first frame is then a delta (Service.SnapshotSince).
	Since *time.Time
}

// ConnectionStore keeps socket connections. Adapter: dynamo; it passes asktest.Run (Backend.Conns).
type ConnectionStore interface {
	// PutConnection records a new connection, not ready. An id already recorded is replaced.
	PutConnection(ctx context.Context, c *Connection) error

	// FindConnection returns a connection by its id alone (a $disconnect knows no more), or an
	// *Error with ENotFound; also when it expired by now.
	FindConnection(ctx context.Context, id string, now time.Time) (*Connection, error)

	// DeleteConnection removes a connection by its id. Removing one that is gone is not an error.
	DeleteConnection(ctx context.Context, id string) error

	// Connections lists a space's connections that have not expired by now, ready or not. It reads
	// strongly: a connection recorded before the call is in the list, or a change committed after
	// the connection was recorded could be lost (see above).
	Connections(ctx context.Context, space string, now time.Time) ([]*Connection, error)

	// MarkMissed notes askID on a connection that is not ready, and reports false. On a connection
	// that is ready it notes nothing and reports true: send the change to it directly. A
	// connection that is gone is an *Error with ENotFound; one that has noted MaxMissed ids
	// already, an *Error with ETooLarge.
	MarkMissed(ctx context.Context, space, id, askID string) (ready bool, err error)

	// MarkReady marks a connection ready and returns the ask ids noted on it, clearing them, in
	// one write. A connection that is gone is an *Error with ENotFound. Marking a ready connection
	// ready again returns no ids.
	MarkReady(ctx context.Context, space, id string) (missed []string, err error)
}
