package asktest

import (
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Stores is every port a store adapter keeps for a deployment: asks, credentials, tickets,
// leases, tasks, uploads, push subscriptions and rules. Both adapters (sqlite, dynamo) are one value
// that is all of them.
type Stores interface {
	ask.Store
	ask.CredentialStore
	ask.TicketStore
	ask.LeaseStore
	ask.TaskStore
	ask.UploadStore
	ask.PushStore
	ask.RuleStore
	ask.ActionStore
	ask.MailStore
	ask.SettingsStore
	ask.SlackStore
	ask.OAuthStore
	ask.PasskeyStore
	ask.MarkStore
	ask.PassStore
}

// Backend is what a store adapter hands Run.
type Backend struct {
	// Open returns the stores one test runs on: fresh, or shared with other tests (every test
	// makes its own spaces, ids and credentials). The adapter closes them through t.Cleanup.
	Open func(t *testing.T) Stores

	// OpenAsks, when set, opens the store for the ask store's suite instead of Open: for a
	// backend on which those tests are slow on a store shared with every other test (DynamoDB on
	// moto, which copies a whole table for every transaction).
	OpenAsks func(t *testing.T) ask.Store

	// Waits and Conns open the two ports only a deployment of many processes keeps in its store
	// (DynamoDB): the waits each credential holds across instances, and the sockets API Gateway
	// holds. Nil where the backend serves one process (SQLite: the local binary counts its waits
	// and holds its sockets itself); Run then skips those suites, saying so.
	Waits func(t *testing.T) ask.WaitStore
	Conns func(t *testing.T) ask.ConnectionStore
}

// Run runs every conformance suite on a backend. Each adapter calls it once, from its own
// _test.go file, so a case added to any suite here runs on every backend by construction:
//
//	func TestConformance(t *testing.T) {
//		asktest.Run(t, asktest.Backend{Open: func(t *testing.T) asktest.Stores { return openTestDB(t) }})
//	}
func Run(t *testing.T, b Backend) {
	openAsks := b.OpenAsks
	if openAsks == nil {
		openAsks = func(t *testing.T) ask.Store { return b.Open(t) }
	}
	t.Run("Store", func(t *testing.T) { testStore(t, openAsks) })
	t.Run("CredentialStore", func(t *testing.T) {
		testCredentialStore(t, func(t *testing.T) ask.CredentialStore { return b.Open(t) })
	})
	t.Run("TicketStore", func(t *testing.T) { testTicketStore(t, func(t *testing.T) ask.TicketStore { return b.Open(t) }) })
	t.Run("LeaseStore", func(t *testing.T) { testLeaseStore(t, func(t *testing.T) ask.LeaseStore { return b.Open(t) }) })
	t.Run("TaskStore", func(t *testing.T) { testTaskStore(t, func(t *testing.T) ask.TaskStore { return b.Open(t) }) })
	t.Run("UploadStore", func(t *testing.T) { testUploadStore(t, func(t *testing.T) ask.UploadStore { return b.Open(t) }) })
	t.Run("PushStore", func(t *testing.T) { testPushStore(t, func(t *testing.T) ask.PushStore { return b.Open(t) }) })
	t.Run("RuleStore", func(t *testing.T) { testRuleStore(t, b.Open) })
	t.Run("ActionStore", func(t *testing.T) { testActionStore(t, func(t *testing.T) ask.ActionStore { return b.Open(t) }) })
	t.Run("MailStore", func(t *testing.T) { testMailStore(t, func(t *testing.T) ask.MailStore { return b.Open(t) }) })
	t.Run("Deadlines", func(t *testing.T) { testDeadlines(t, b.Open) })
	t.Run("OAuthStore", func(t *testing.T) { testOAuthStore(t, func(t *testing.T) OAuthStores { return b.Open(t) }) })
	t.Run("MarkStore", func(t *testing.T) { testMarkStore(t, b.Open) })
	t.Run("SlackStore", func(t *testing.T) { testSlackStore(t, func(t *testing.T) ask.SlackStore { return b.Open(t) }) })
	t.Run("PasskeyStore", func(t *testing.T) { testPasskeyStore(t, func(t *testing.T) ask.PasskeyStore { return b.Open(t) }) })
	t.Run("SSOStore", func(t *testing.T) {
		testSSOStore(t, func(t *testing.T) ask.SSOStore {
			s, ok := b.Open(t).(ask.SSOStore)
			if !ok {
				t.Fatal("the backend keeps no ask.SSOStore")
			}
			return s
		})
	})
	t.Run("PassStore", func(t *testing.T) { testPassStore(t, func(t *testing.T) ask.PassStore { return b.Open(t) }) })
	t.Run("WaitStore", func(t *testing.T) {
		if b.Waits == nil {
			t.Skip("this backend serves one process and keeps no ask.WaitStore")
		}
		testWaitStore(t, b.Waits)
	})
	t.Run("ConnectionStore", func(t *testing.T) {
		if b.Conns == nil {
			t.Skip("this backend serves one process and keeps no ask.ConnectionStore")
		}
		testConnectionStore(t, b.Conns)
	})
}
