package dynamo

// WithBodyLimits returns a copy of s that keeps compressed ask bodies up to inline bytes in the
// ask item and splits bigger ones into chunks of chunk bytes: small limits let a test reach the
// chunked path without megabytes of data.
func WithBodyLimits(s *Store, inline, chunk int) *Store {
	c := *s
	c.inlineBody, c.chunkBytes = inline, chunk
	return &c
}
