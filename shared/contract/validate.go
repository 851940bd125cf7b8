package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// The embedded documents are registered with the validator under these URLs. Nothing is fetched
// from them: any reference outside the two documents fails to compile.
const (
	bundleURL  = "https://loopback.invalid/contract/loopback.json"
	openAPIURL = "https://loopback.invalid/contract/openapi.json"
)

// ValidateModel validates body, a JSON document, against the model of the contract named name, such
// as "Ask", "Reply", "QuestionInput" or "Problem" (Models lists them all). The error says which
// model was used and, for each failure, where in body it is and what failed. For a union such as
// Ask or Reply, whose variants are told apart by a constant property (kind, outcome, type, author),
// only the failures of the variant that body names are reported.
func ValidateModel(name string, body []byte) error {
	m, err := loadModels()
	if err != nil {
		return err
	}
	sch, ok := m[name]
	if !ok {
		return fmt.Errorf("contract: no model named %q; the contract has %s", name, strings.Join(sortedKeys(m), ", "))
	}
	v, err := decodeInstance(body)
	if err != nil {
		return fmt.Errorf("contract: %s: body is not JSON: %w", name, err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("contract: body is not a valid %s: %w", name, explain(err))
	}
	return nil
}

// Models returns the names of every model, union and enum of the contract, sorted.
func Models() []string {
	b, err := loadBundle()
	if err != nil {
		return nil
	}
	return slices.Clone(b.names)
}

var loadModels = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	b, err := loadBundle()
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(JSONSchema()))
	if err != nil {
		return nil, fmt.Errorf("contract: %s: %w", jsonSchemaFile, err)
	}
	c := newCompiler()
	if err := c.AddResource(bundleURL, doc); err != nil {
		return nil, fmt.Errorf("contract: %s: %w", jsonSchemaFile, err)
	}
	m := make(map[string]*jsonschema.Schema, len(b.names))
	for _, name := range b.names {
		sch, err := c.Compile(bundleURL + "#/$defs/" + escapePointer(name))
		if err != nil {
			return nil, fmt.Errorf("contract: compiling the JSON Schema of %s: %w", name, err)
		}
		m[name] = sch
	}
	return m, nil
})

func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "int32", Validate: validateInt32})
	c.UseLoader(offline{})
	return c
}

// offline refuses to load any document: the contract is the two embedded ones.
type offline struct{}

func (offline) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is not part of the embedded contract", url)
}

// validateInt32 is the OpenAPI "int32" format. The JSON Schema bundle states the same bounds with
// minimum and maximum.
func validateInt32(v any) error {
	n, ok := v.(json.Number)
	if !ok {
		return nil // only numbers carry the format; "type" rejects anything else
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || !r.IsInt() {
		return nil // not an integer: "type": "integer" reports it
	}
	if i := r.Num(); !i.IsInt64() || i.Int64() < -1<<31 || i.Int64() > 1<<31-1 {
		return fmt.Errorf("%s is out of the range of a 32-bit integer", n)
	}
	return nil
}

// decodeInstance decodes one JSON value, keeping numbers exact, and refuses trailing data.
func decodeInstance(body []byte) (any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errors.New("empty body")
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(body))
}

// explain narrows a validation error to what a person needs to read: within a union whose variants
// are told apart by a constant property, the variants the value does not name are dropped.
func explain(err error) error {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return prune(ve)
	}
	return err
}

func prune(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	out := *e
	out.Causes = nil
	causes := e.Causes
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		var named []*jsonschema.ValidationError
		for _, c := range causes {
			if !namesOtherVariant(c, len(e.InstanceLocation)+1) {
				named = append(named, c)
			}
		}
		switch {
		case len(named) == 1:
			return prune(named[0])
		case len(named) > 1:
			causes = named
		case len(causes) > 1:
			if d := unknownVariant(e, causes); d != nil {
				return d
			}
		}
	}
	seen := map[string]bool{}
	for _, c := range causes {
		p := prune(c)
		if msg := p.Error(); !seen[msg] {
			seen[msg] = true
			out.Causes = append(out.Causes, p)
		}
	}
	slices.SortStableFunc(out.Causes, func(a, b *jsonschema.ValidationError) int {
		return slices.Compare(a.InstanceLocation, b.InstanceLocation)
	})
	return &out
}

// unknownVariant is the error for a value that names none of a union's variants: one line saying
// which values the constant property may take. It is nil unless every variant failed on the same
// constant property.
func unknownVariant(e *jsonschema.ValidationError, variants []*jsonschema.ValidationError) *jsonschema.ValidationError {
	depth := len(e.InstanceLocation) + 1
	var loc []string
	var got any
	var want []any
	for _, v := range variants {
		d := discriminator(v, depth)
		if d == nil || (loc != nil && !slices.Equal(loc, d.InstanceLocation)) {
			return nil
		}
		loc = d.InstanceLocation
		switch k := d.ErrorKind.(type) {
		case *kind.Const:
			got, want = k.Got, append(want, k.Want)
		case *kind.Enum:
			got, want = k.Got, append(want, k.Want...)
		default:
			return nil
		}
	}
	return &jsonschema.ValidationError{
		SchemaURL:        e.SchemaURL,
		InstanceLocation: loc,
		ErrorKind:        &kind.Enum{Got: got, Want: want},
	}
}

// discriminator finds the failure on a constant property at depth within a variant's failures.
func discriminator(e *jsonschema.ValidationError, depth int) *jsonschema.ValidationError {
	if len(e.InstanceLocation) == depth {
		switch k := e.ErrorKind.(type) {
		case *kind.Const:
			return e
		case *kind.Enum:
			if len(k.Want) == 1 {
				return e
			}
		}
		return nil
	}
	if len(e.InstanceLocation) > depth {
		return nil
	}
	for _, c := range e.Causes {
		if d := discriminator(c, depth); d != nil {
			return d
		}
	}
	return nil
}

// namesOtherVariant reports whether a variant failed on a constant property of the value itself (at
// depth), such as "kind" or "outcome": the value is another variant of the union.
func namesOtherVariant(e *jsonschema.ValidationError, depth int) bool {
	if len(e.InstanceLocation) == depth {
		switch k := e.ErrorKind.(type) {
		case *kind.Const:
			return true
		case *kind.Enum:
			if len(k.Want) == 1 {
				return true
			}
		case *kind.AnyOf:
			// A property that is a union of constants, as AskEvent's "type" is in the JSON Schema.
			allConst := len(e.Causes) > 0
			for _, c := range e.Causes {
				if _, ok := c.ErrorKind.(*kind.Const); !ok || len(c.InstanceLocation) != depth {
					allConst = false
				}
			}
			if allConst {
				return true
			}
		}
	}
	if len(e.InstanceLocation) > depth {
		return false
	}
	for _, c := range e.Causes {
		if namesOtherVariant(c, depth) {
			return true
		}
	}
	return false
}

// escapePointer escapes one JSON pointer token.
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
