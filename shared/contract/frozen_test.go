package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEmbeddedIsFrozenRevision fails when the embedded schema/ is not, byte for byte, the frozen
// spec/revisions/<Revision>/: the files Go validates against are the ones that shipped. (That
// main.tsp still emits them is spec/check-frozen.sh's job, as it needs Node.)
func TestEmbeddedIsFrozenRevision(t *testing.T) {
	dir := filepath.Join("..", "..", "spec", "revisions", fmt.Sprint(Revision))
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading the frozen revision: %v", err)
	}
	var frozen []string
	for _, e := range entries {
		if !e.IsDir() {
			frozen = append(frozen, e.Name())
		}
	}
	embedded, err := fs.Glob(Files(), "*")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(frozen)
	slices.Sort(embedded)
	if !slices.Equal(frozen, embedded) {
		t.Fatalf("embedded files %v, frozen in %s: %v", embedded, dir, frozen)
	}
	for _, name := range frozen {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			got, err := fs.ReadFile(Files(), name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("schema/%s differs from %s/%s; run `cd spec && npm run build`, and never edit a shipped revision", name, dir, name)
			}
		})
	}
}

func TestEmbeddedDocuments(t *testing.T) {
	var api struct {
		OpenAPI string `json:"openapi"`
		Info    struct {
			Version string `json:"version"`
		} `json:"info"`
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(OpenAPI(), &api); err != nil {
		t.Fatal(err)
	}
	if api.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", api.OpenAPI)
	}
	// OpenAPI is the newest revision's document: Revision's, or one in the making after it.
	if want := strings.TrimSuffix(strings.TrimPrefix(newestOpenAPI(), "schema/openapi."), ".json"); api.Info.Version != want ||
		api.Info.Version < fmt.Sprint(Revision) {
		t.Errorf("info.version = %q, want the newest revision emitted (%s), at least %d", api.Info.Version, want, Revision)
	}
	if len(api.Servers) != 1 || api.Servers[0].URL != ServerPath {
		t.Errorf("servers = %+v, want one at %s", api.Servers, ServerPath)
	}

	var bundle struct {
		Schema string                     `json:"$schema"`
		Defs   map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(JSONSchema(), &bundle); err != nil {
		t.Fatal(err)
	}
	if bundle.Schema != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %q, want draft 2020-12", bundle.Schema)
	}
	for _, name := range []string{"Ask", "Reply", "QuestionInput", "Problem", "ServerEvent", "Revisions"} {
		if _, ok := bundle.Defs[name]; !ok {
			t.Errorf("the JSON Schema bundle has no %s", name)
		}
	}
	if got, want := Models(), len(bundle.Defs); len(got) != want {
		t.Errorf("Models() has %d names, the bundle %d", len(got), want)
	}
}
