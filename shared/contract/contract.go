// Package contract is the Loopback contract as Go code can use it: the OpenAPI 3.1 document and the
// JSON Schema (draft 2020-12) of every model, both emitted from spec/main.tsp, embedded, and
// validators over them for tests across the repository.
//
// The files under schema/ are written by `cd spec && npm run build` and are never edited by hand.
// spec/check-frozen.sh fails when they differ from what spec/main.tsp emits now, and
// TestEmbeddedIsFrozenRevision fails when they differ from the frozen spec/revisions/<Revision>/.
//
//   - ValidateModel checks a JSON message against one model of the JSON Schema bundle.
//   - ValidateResponse checks an HTTP response against the operation it answers in the OpenAPI
//     document.
//   - Schema and ToolSchema give a model's schema as one self-contained object, with every model it
//     refers to under $defs, for MCP tool input and output schemas.
//
// Both validators use github.com/santhosh-tekuri/jsonschema/v6, not kin-openapi. OpenAPI 3.1 schema
// objects are JSON Schema draft 2020-12, so one standards-conformant validator serves both
// documents: the OpenAPI document is loaded as a JSON resource and each response schema is compiled
// by its JSON pointer, with its "#/components/schemas/..." references resolved by the same engine.
// kin-openapi's validator is its own implementation of the schema object, grown from OpenAPI 3.0,
// with 3.1 keywords added piecemeal; two engines that could disagree about the same model would
// make a test failure ambiguous. Formats are asserted: a utcDateTime must be an RFC 3339 date-time,
// and the OpenAPI document's "int32" format is checked as a 32-bit integer.
package contract

import (
	"embed"
	"fmt"
	"io/fs"
)

// Revision is the revision of the contract this code writes: the newest member of the contract's
// Revisions enum. See docs/design/versioned-messages.md.
const Revision = 8

// ServerPath is the path every operation of the OpenAPI document is relative to.
const ServerPath = "/api/v1"

//go:embed schema/*.json
var files embed.FS

var (
	// openAPIFile is the OpenAPI document of the newest revision emitted, as the emitter names
	// it: the current one, or a revision in the making (declared and emitted, not yet frozen,
	// Revision not yet moved to it), whose additions the code already serves and its responses
	// are checked against. Each revision's document is a superset of the one before.
	openAPIFile = newestOpenAPI()

	// jsonSchemaFile is the JSON Schema bundle: every model under $defs.
	jsonSchemaFile = "schema/loopback.json"
)

// Files returns the emitted files, under the names the emitters gave them: openapi.<revision>.json
// and loopback.json.
func Files() fs.FS {
	sub, err := fs.Sub(files, "schema")
	if err != nil {
		panic(err) // the directory is embedded; Sub cannot fail on it
	}
	return sub
}

// OpenAPI returns the emitted OpenAPI 3.1 document of the current revision.
func OpenAPI() []byte { return mustRead(openAPIFile) }

// JSONSchema returns the emitted JSON Schema bundle: a draft 2020-12 document with every model of
// the contract under $defs, each with its own $id ("Ask.json") and references by those ids.
func JSONSchema() []byte { return mustRead(jsonSchemaFile) }

// newestOpenAPI is the embedded openapi.<n>.json with the highest n, at least Revision's.
func newestOpenAPI() string {
	newest := Revision
	names, _ := fs.Glob(files, "schema/openapi.*.json")
	for _, name := range names {
		var n int
		if _, err := fmt.Sscanf(name, "schema/openapi.%d.json", &n); err == nil && n > newest {
			newest = n
		}
	}
	return fmt.Sprintf("schema/openapi.%d.json", newest)
}

func mustRead(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(fmt.Sprintf("contract: %s is not embedded: run `cd spec && npm run build`", name))
	}
	return b
}
