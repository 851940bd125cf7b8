package mcptools

import "context"

type publicURLKey struct{}

// withPublicURL keeps the deployment's address for this request (Config.PublicURL), checked
// once against the request's Origin, for the tools that write links.
func withPublicURL(ctx context.Context, url string) context.Context {
	return context.WithValue(ctx, publicURLKey{}, url)
}

// publicURL is where people reach this deployment, as the request that called a tool named it.
func publicURL(ctx context.Context) string {
	u, _ := ctx.Value(publicURLKey{}).(string)
	return u
}
