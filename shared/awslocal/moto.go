package awslocal

// moto's server (moto_server, moto 5.2.1, which make setup installs into .venv): the AWS emulator
// aws-local stores things in when no AWS_ENDPOINT_URL is given, and the one every test of the AWS
// adapters runs against (shared/awstest). Requests to one server are made one at a time (see
// Config): moto handles each request on a thread of its own without locks, so two requests on
// one item can interleave inside it, which DynamoDB never allows. Serialising them restores
// DynamoDB's guarantee that each request is atomic.

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// MotoRegion is the region every client of the emulator uses.
const MotoRegion = "us-east-1"

// startTimeout bounds how long moto_server may take to start answering.
const startTimeout = 60 * time.Second

// Moto is a moto_server this process started, listening on a free port of 127.0.0.1.
type Moto struct {
	// URL is the server's root, such as http://127.0.0.1:41234.
	URL string

	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	log  *tail         // the last lines it wrote, for failure messages

	mu sync.Mutex // held for each request; see Config
}

var listening = regexp.MustCompile(`Running on (http://127\.0\.0\.1:\d+)`)

// StartMoto starts moto_server on a free port of 127.0.0.1 (port 0: the kernel picks it, and the
// server says which) and waits until it answers.
func StartMoto() (*Moto, error) {
	path, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, fmt.Errorf("moto_server is not on PATH: %w", err)
	}
	cmd := exec.Command(path, "-H", "127.0.0.1", "-p", "0")
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	configureProcess(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	s := &Moto{cmd: cmd, done: make(chan struct{}), log: &tail{max: 40}}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()

	// Read its log for good: the line that names the address first, then the request log, which
	// must keep draining or the server blocks once the pipe is full.
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.log.add(line)
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()

	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	select {
	case s.URL = <-found:
	case <-s.done:
		return nil, fmt.Errorf("moto_server exited before it listened:\n%s", s.log)
	case <-deadline.C:
		s.Close()
		return nil, fmt.Errorf("moto_server did not say where it listens within %s:\n%s", startTimeout, s.log)
	}
	for {
		if err := s.ping(); err == nil {
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("moto_server exited before it answered:\n%s", s.log)
		case <-deadline.C:
			s.Close()
			return nil, fmt.Errorf("moto_server at %s did not answer within %s:\n%s", s.URL, startTimeout, s.log)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ping asks moto's own API whether it is up.
func (s *Moto) ping() error {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(s.URL + "/moto-api/")
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		return fmt.Errorf("moto-api answered %s", resp.Status)
	}
	return nil
}

// Close stops the server (its whole process group) and waits for it, a few seconds at most.
func (s *Moto) Close() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	stopProcess(s.cmd, false)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		stopProcess(s.cmd, true)
		<-s.done
	}
}

// Config returns an AWS configuration for the emulator: static credentials, region us-east-1,
// every service's endpoint at the server's root, and an HTTP client that sends one request to
// the server at a time (see the package documentation). S3 clients also need path-style
// addressing: use S3, or set UsePathStyle.
func (s *Moto) Config() aws.Config {
	return aws.Config{
		Region:       MotoRegion,
		Credentials:  credentials.NewStaticCredentialsProvider("testing", "testing", ""),
		BaseEndpoint: aws.String(s.URL),
		HTTPClient:   &serialClient{mu: &s.mu, c: &http.Client{Timeout: time.Minute}},
		// A request the SDK sends again names itself in the log: its first answer was lost (a
		// write may have landed), which the stores must take for what it is.
		ClientLogMode: aws.LogRetries,
	}
}

// DynamoDB returns a DynamoDB client of the emulator.
func (s *Moto) DynamoDB() *dynamodb.Client { return dynamodb.NewFromConfig(s.Config()) }

// S3 returns an S3 client of the emulator, with path-style addressing (bucket names in the path,
// since the emulator's address has no per-bucket host names). moto sends no checksums with
// objects, which the SDK would note in the log on every read: that note is off.
func (s *Moto) S3() *s3.Client {
	return s3.NewFromConfig(s.Config(), func(o *s3.Options) {
		o.UsePathStyle = true
		o.DisableLogOutputChecksumValidationSkipped = true
	})
}

// serialClient sends one request at a time. moto has computed the whole response before it sends
// the status line, so the lock is held until the response's headers arrive and no longer.
type serialClient struct {
	mu *sync.Mutex
	c  *http.Client
}

func (c *serialClient) Do(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.c.Do(r)
}

// tail keeps the last lines of a log.
type tail struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return "  (it wrote nothing)"
	}
	return "  " + strings.Join(t.lines, "\n  ")
}

// SerialClient is an HTTP client that sends one request at a time, for an emulator this process
// did not start (AWS_ENDPOINT_URL): see the top of this file.
func SerialClient() aws.HTTPClient {
	return &serialClient{mu: &sync.Mutex{}, c: &http.Client{Timeout: time.Minute}}
}
