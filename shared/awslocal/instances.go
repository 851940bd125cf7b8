package awslocal

import (
	"context"
	"net/http"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

// instances are one function's Lambda instances: each serves one invocation at a time, and a new
// one starts (its own runtime, as a cold start) when every other is busy. The MCP function needs
// it: its handler waits, after each request, for every wait of its instance to write its
// bookkeeping (awsrt.MCP), which on a shared instance would hold one agent's request until
// another agent's wait ended.
type instances struct {
	start func() (*awsrt.Runtime, error)

	mu   sync.Mutex
	idle []*instance
	all  []*instance
}

type instance struct {
	rt     *awsrt.Runtime
	invoke func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error)
}

// Invoke runs one function URL invocation on a free instance; the instance is free again when
// its handler has returned, which is after the response's last byte.
func (p *instances) Invoke(ctx context.Context, ev *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
	in, err := p.get()
	if err != nil {
		return nil, err
	}
	return in.invoke(ctx, ev)
}

func (p *instances) get() (*instance, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		in := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return in, nil
	}
	p.mu.Unlock()
	rt, err := p.start()
	if err != nil {
		return nil, err
	}
	in := &instance{rt: rt}
	mcp := rt.MCP()
	in.invoke = lambdaurl.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer p.put(in)
		mcp.ServeHTTP(w, r)
	}))
	p.mu.Lock()
	p.all = append(p.all, in)
	p.mu.Unlock()
	return in, nil
}

func (p *instances) put(in *instance) {
	p.mu.Lock()
	p.idle = append(p.idle, in)
	p.mu.Unlock()
}

// counts says how many instances are running an invocation now, and how many were started.
func (p *instances) counts() (busy, started int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.all) - len(p.idle), len(p.all)
}

// each runs fn on every instance started so far.
func (p *instances) each(fn func(*awsrt.Runtime)) {
	p.mu.Lock()
	all := append([]*instance(nil), p.all...)
	p.mu.Unlock()
	for _, in := range all {
		fn(in.rt)
	}
}
