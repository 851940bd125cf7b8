package dynamo_test

import (
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/ask/asktest"
)

func TestConnectionStore(t *testing.T) {
	asktest.TestConnectionStore(t, func(t *testing.T) ask.ConnectionStore { return sharedStore(t) })
}
