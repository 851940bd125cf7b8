package dynamo_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

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
		shared.store = dynamo.New(noScanClient(), name)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.store
}

// TestConformance runs asktest. Each test of the ask store gets a table of its own, unlike the
// other suites: moto copies a whole table for every transaction (to roll it back if the
// transaction fails), so on a table that every test filled, the closes that race for one close
// time cost seconds each.
func TestConformance(t *testing.T) {
	asktest.Run(t, asktest.Backend{
		Open:     func(t *testing.T) asktest.Stores { return sharedStore(t) },
		OpenAsks: func(t *testing.T) ask.Store { return newStore(t) },
		Waits:    func(t *testing.T) ask.WaitStore { return sharedStore(t) },
		Conns:    func(t *testing.T) ask.ConnectionStore { return sharedStore(t) },
	})
}

// newStore returns a store on a table of its own.
func newStore(t *testing.T) *dynamo.Store {
	t.Helper()
	name := awstest.Name("loopback")
	if err := dynamo.CreateTable(context.Background(), moto.DynamoDB(), name); err != nil {
		t.Fatal(err)
	}
	return dynamo.New(noScanClient(), name)
}

// noScanClient is a DynamoDB client of the emulator that refuses to send a Scan: the stores'
// clients are made with it, so a Scan anywhere in the store fails the test that reached it.
func noScanClient() *dynamodb.Client {
	cfg := moto.Config()
	cfg.HTTPClient = noScan{cfg.HTTPClient}
	return dynamodb.NewFromConfig(cfg)
}

type noScan struct{ next aws.HTTPClient }

func (c noScan) Do(r *http.Request) (*http.Response, error) {
	if target := r.Header.Get("X-Amz-Target"); strings.HasSuffix(target, ".Scan") {
		return nil, fmt.Errorf("the store sent %s: a Scan on a request path", target)
	}
	return c.next.Do(r)
}

// TestClaimPush: a change's push is claimed once, whatever the stream delivers again: the same
// version a second time, or an older one after a newer, is refused; a newer one wins; asks and
// spaces are apart.
func TestClaimPush(t *testing.T) {
	s, ctx := sharedStore(t), context.Background()
	until := time.Now().Add(48 * time.Hour)
	for _, c := range []struct {
		space, id string
		version   int
		want      bool
	}{
		{"sp_claim", "a1", 1, true},
		{"sp_claim", "a1", 1, false},
		{"sp_claim", "a1", 3, true},
		{"sp_claim", "a1", 2, false},
		{"sp_claim", "a1", 3, false},
		{"sp_claim", "a2", 1, true},
		{"sp_other", "a1", 1, true},
	} {
		got, err := s.ClaimPush(ctx, c.space, c.id, c.version, until)
		if err != nil || got != c.want {
			t.Errorf("ClaimPush(%s, %s, v%d) = %v, %v; want %v", c.space, c.id, c.version, got, err, c.want)
		}
	}
	if _, err := s.ClaimPush(ctx, "sp#bad", "a1", 1, until); err == nil {
		t.Error("a space with # was claimed")
	}
}
