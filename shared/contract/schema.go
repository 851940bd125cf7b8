package contract

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// bundle is the emitted JSON Schema bundle, decoded with its key order kept.
type bundle struct {
	defs  *object  // model name -> its schema, as emitted
	names []string // sorted
}

var loadBundle = sync.OnceValues(func() (*bundle, error) {
	v, err := decodeOrdered(JSONSchema())
	if err != nil {
		return nil, fmt.Errorf("contract: %s: %w", jsonSchemaFile, err)
	}
	root, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("contract: %s is not a JSON object", jsonSchemaFile)
	}
	dv, _ := root.get("$defs")
	defs, ok := dv.(*object)
	if !ok {
		return nil, fmt.Errorf("contract: %s has no $defs", jsonSchemaFile)
	}
	names := slices.Clone(defs.keys)
	slices.Sort(names)
	return &bundle{defs: defs, names: names}, nil
})

// Schema returns the JSON Schema (draft 2020-12) of the model, union or enum named name as one
// self-contained object: the model's own schema at the root, with its descriptions, and every model
// it refers to, directly or not, under "$defs", referred to as "#/$defs/<Name>". Properties keep the
// order the contract declares them in. The emitted "$id" and "$schema" keywords are left out.
func Schema(name string) (json.RawMessage, error) {
	root, err := selfContained(name)
	if err != nil {
		return nil, err
	}
	return encodeOrdered(root)
}

// ToolSchema returns Schema(name) for use as an MCP tool's inputSchema or outputSchema, which must
// be of type "object" at the root. A union of models, such as Reply, gets "type": "object" beside
// its "anyOf", as every variant is an object; anything else that is not an object, such as an enum,
// is an error.
func ToolSchema(name string) (json.RawMessage, error) {
	root, err := selfContained(name)
	if err != nil {
		return nil, err
	}
	if t, _ := root.get("type"); t != "object" {
		if t != nil || !variantsAreObjects(root) {
			return nil, fmt.Errorf("contract: %s is not an object, so it cannot be a tool schema", name)
		}
		typed := newObject()
		typed.set("type", "object")
		for _, k := range root.keys {
			typed.set(k, root.vals[k])
		}
		root = typed
	}
	return encodeOrdered(root)
}

// MustToolSchema is ToolSchema for names known to be objects of the contract, as in tool
// registrations; it panics otherwise.
func MustToolSchema(name string) json.RawMessage {
	s, err := ToolSchema(name)
	if err != nil {
		panic(err)
	}
	return s
}

// selfContained builds the schema of name with every referenced model under $defs.
func selfContained(name string) (*object, error) {
	b, err := loadBundle()
	if err != nil {
		return nil, err
	}
	def := func(n string) (*object, error) {
		v, ok := b.defs.get(n)
		o, isObj := v.(*object)
		if !ok || !isObj {
			return nil, fmt.Errorf("contract: no model named %q; the contract has %s", n, strings.Join(b.names, ", "))
		}
		o = clone(o).(*object)
		o.del("$schema")
		o.del("$id")
		return o, nil
	}

	root, err := def(name)
	if err != nil {
		return nil, err
	}
	var queue []string
	seen := map[string]bool{}
	rewrite := func(v any) error {
		return rewriteRefs(v, false, func(target string) {
			if !seen[target] {
				seen[target] = true
				queue = append(queue, target)
			}
		}, b.defs)
	}
	if err := rewrite(root); err != nil {
		return nil, fmt.Errorf("contract: %s: %w", name, err)
	}
	defs := newObject()
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		d, err := def(n)
		if err != nil {
			return nil, err
		}
		if err := rewrite(d); err != nil {
			return nil, fmt.Errorf("contract: %s: %w", n, err)
		}
		defs.set(n, d)
	}
	if len(defs.keys) > 0 {
		root.set("$defs", defs)
	}
	return root, nil
}

// rewriteRefs turns every "$ref": "<Name>.json" of the bundle into "#/$defs/<Name>", reporting each
// name it refers to. In a map of names to schemas ("properties", "$defs", ...), every value is a
// schema, whatever its key.
func rewriteRefs(v any, schemaMap bool, refer func(string), defs *object) error {
	switch t := v.(type) {
	case *object:
		if r, ok := t.get("$ref"); ok && !schemaMap {
			s, _ := r.(string)
			target, found := strings.CutSuffix(s, ".json")
			if _, known := defs.get(target); !found || !known {
				return fmt.Errorf("unexpected reference %q", s)
			}
			t.set("$ref", "#/$defs/"+escapePointer(target))
			refer(target)
		}
		for _, k := range t.keys {
			if !schemaMap && (k == "const" || k == "enum" || k == "default" || k == "examples") {
				continue // values, not schemas
			}
			isMap := !schemaMap && (k == "properties" || k == "patternProperties" || k == "$defs" || k == "dependentSchemas")
			if err := rewriteRefs(t.vals[k], isMap, refer, defs); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range t {
			if err := rewriteRefs(e, false, refer, defs); err != nil {
				return err
			}
		}
	}
	return nil
}

// variantsAreObjects reports whether root is a union ("anyOf" or "oneOf") whose every variant is a
// reference to an object model in root's $defs.
func variantsAreObjects(root *object) bool {
	dv, _ := root.get("$defs")
	defs, _ := dv.(*object)
	for _, key := range []string{"anyOf", "oneOf"} {
		v, ok := root.get(key)
		if !ok {
			continue
		}
		variants, _ := v.([]any)
		if len(variants) == 0 || defs == nil {
			return false
		}
		for _, variant := range variants {
			vo, _ := variant.(*object)
			if vo == nil {
				return false
			}
			r, _ := vo.get("$ref")
			s, _ := r.(string)
			name, ok := strings.CutPrefix(s, "#/$defs/")
			if !ok {
				return false
			}
			d, _ := defs.get(name)
			do, _ := d.(*object)
			if do == nil {
				return false
			}
			if t, _ := do.get("type"); t != "object" {
				return false
			}
		}
		return true
	}
	return false
}
