package httpapi

import "testing"

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		public, origin string
		want           bool
	}{
		{"http://127.0.0.1:8080", "", true},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080", true},
		{"http://127.0.0.1:8080", "http://localhost:8080", true},
		{"http://localhost:8080", "http://[::1]:8080", true},
		{"http://127.0.0.1:8080", "http://localhost:8081", false},
		{"http://127.0.0.1:8080", "https://localhost:8080", false},
		{"http://127.0.0.1:8080", "http://localhost.evil.com:8080", false},
		{"http://127.0.0.1:8080", "http://evil.com", false},
		{"https://inbox.example.com", "https://inbox.example.com:443", true},
		{"https://inbox.example.com", "https://localhost", false},
		{"https://inbox.example.com", "null", false},
	} {
		if got := SameOrigin(tc.public, tc.origin); got != tc.want {
			t.Errorf("SameOrigin(%q, %q) = %v, want %v", tc.public, tc.origin, got, tc.want)
		}
	}
}
