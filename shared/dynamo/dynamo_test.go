package dynamo_test

import (
	"context"
	"sync"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/ask/asktest"
	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/dynamo"
)

// moto is the emulator every test of the package talks to; TestMain starts it, and a missing
// moto_server fails the run.
var moto *awstest.Server

func TestMain(m *testing.M) { awstest.Main(m, &moto) }

// One table for the whole run, created by the code a deployment's table is checked against
// (TestTableMatchesTemplate): the conformance suites make their own spaces, so they share it
// the way every space of a deployment does.
var shared struct {
	once  sync.Once
	store *dynamo.Store
	err   error
}

func sharedStore(t *testing.T) *dynamo.Store {
	t.Helper()
	shared.once.Do(func() {
		name := awstest.Name("loopback")
		shared.err = dynamo.CreateTable(context.Background(), moto.DynamoDB(), name)
		shared.store = dynamo.New(moto.DynamoDB(), name)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.store
}

func TestStore(t *testing.T) {
	asktest.TestStore(t, func(t *testing.T) ask.Store { return sharedStore(t) })
}

func TestCredentialStore(t *testing.T) {
	asktest.TestCredentialStore(t, func(t *testing.T) ask.CredentialStore { return sharedStore(t) })
}

func TestTicketStore(t *testing.T) {
	asktest.TestTicketStore(t, func(t *testing.T) ask.TicketStore { return sharedStore(t) })
}

func TestLeaseStore(t *testing.T) {
	asktest.TestLeaseStore(t, func(t *testing.T) ask.LeaseStore { return sharedStore(t) })
}

func TestTaskStore(t *testing.T) {
	asktest.TestTaskStore(t, func(t *testing.T) ask.TaskStore { return sharedStore(t) })
}
