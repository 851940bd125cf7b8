// Package awstest runs tests against a real AWS emulator: moto's server mode (`moto_server`, moto
// 5.2.1, which make setup installs into .venv; shared/awslocal starts it). A test package starts
// one server for its whole run from TestMain, and every test talks to it through ordinary SDK
// clients:
//
//	var moto *awstest.Server
//
//	func TestMain(m *testing.M) { awstest.Main(m, &moto) }
//
//	func TestSomething(t *testing.T) { client := dynamodb.NewFromConfig(moto.Config()) … }
//
// A missing or broken moto_server fails the run; it is never skipped. Requests to one server are
// made one at a time (awslocal.Moto.Config says why).
package awstest

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/loopback-hq/loopback/shared/awslocal"
)

// Server is a moto_server this process started (awslocal.Moto).
type Server = awslocal.Moto

// Region is the region every client of the emulator uses.
const Region = awslocal.MotoRegion

// Start starts moto_server on a free port of 127.0.0.1 and waits until it answers.
func Start() (*Server, error) { return awslocal.StartMoto() }

// Main starts a moto_server, stores it in *srv, runs the package's tests, stops the server and
// exits with the tests' status. When the server cannot start (moto_server is not on PATH, or it
// never answers) it says why and exits with status 1: the run fails, it does not skip.
func Main(m *testing.M, srv **Server) {
	s, err := Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "awstest: %v\n"+
			"awstest: the AWS adapter tests need moto's server: run `make setup` (it installs moto[server]==5.2.1 into .venv and make puts .venv/bin on PATH) or `pip install 'moto[server]==5.2.1'`, and put moto_server on PATH\n", err)
		os.Exit(1)
	}
	*srv = s
	code := m.Run()
	s.Close()
	os.Exit(code)
}

// Name returns a resource name (table, bucket) no other caller of this process gets: lower case
// letters, digits and dashes, so that it suits S3 bucket names too.
func Name(prefix string) string {
	namesMu.Lock()
	defer namesMu.Unlock()
	names++
	return fmt.Sprintf("%s-%d-%d", strings.ToLower(prefix), os.Getpid(), names)
}

var (
	namesMu sync.Mutex
	names   int
)
