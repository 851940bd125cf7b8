package contract

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	// ErrUnknownOperation is wrapped by ValidateResponse's error when the contract declares no
	// operation for the method and path.
	ErrUnknownOperation = errors.New("contract: no such operation")

	// ErrUndeclaredStatus is wrapped by ValidateResponse's error when the operation does not declare
	// the response status. The contract declares only some of the errors each operation can answer
	// with (a 400 or a 500 is declared nowhere): a caller that expects such a status can test for
	// this error with errors.Is and validate the body with ValidateModel("Problem", body) instead.
	ErrUndeclaredStatus = errors.New("contract: status not declared for the operation")
)

// ValidateResponse validates an HTTP response against the OpenAPI 3.1 document of the contract.
//
// path is either a request path ("/api/v1/asks/a1/reply", with or without the query) or a path
// template ("/asks/{id}/reply"), with or without the server prefix /api/v1. The operation is found
// by method and path, preferring literal segments over {parameters}; then the response by status
// ("200", then "2XX", then "default"); then the content by contentType, a Content-Type header value
// whose parameters are ignored. A JSON body (application/json or +json) is validated against the
// response's schema, with its references into components resolved; a body of another media type,
// such as an image, is not read. A response that declares no content must have an empty body.
//
// The error wraps ErrUnknownOperation or ErrUndeclaredStatus when the contract declares no such
// operation or status, and otherwise names the operation, status and media type and says what in the
// body failed.
func ValidateResponse(method, path string, status int, contentType string, body []byte) error {
	api, err := loadOpenAPI()
	if err != nil {
		return err
	}
	op, err := api.find(method, path)
	if err != nil {
		return err
	}
	resp, key := op.response(status)
	if resp == nil {
		return fmt.Errorf("%w: %s %s declares %s, not %d", ErrUndeclaredStatus, op.method, op.template, strings.Join(op.statuses, ", "), status)
	}
	where := fmt.Sprintf("%s %s %d", op.method, op.template, status)
	if key != strconv.Itoa(status) {
		where += " (as " + key + ")"
	}

	if len(resp.mediaTypes) == 0 {
		if len(bytes.TrimSpace(body)) > 0 {
			return fmt.Errorf("contract: %s declares no body, got %d bytes", where, len(body))
		}
		return nil
	}
	if contentType == "" {
		return fmt.Errorf("contract: %s: the response has no Content-Type; the contract declares %s", where, strings.Join(resp.mediaTypes, ", "))
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("contract: %s: Content-Type %q: %w", where, contentType, err)
	}
	declared, ok := resp.match(mt)
	if !ok {
		return fmt.Errorf("contract: %s: Content-Type %s is not declared; the contract declares %s", where, mt, strings.Join(resp.mediaTypes, ", "))
	}
	sch := resp.schemas[declared]
	if sch == nil {
		return nil // not JSON: the schema only names the media type
	}
	v, err := decodeInstance(body)
	if err != nil {
		return fmt.Errorf("contract: %s (%s): body is not JSON: %w", where, mt, err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("contract: %s (%s): body does not match: %w", where, mt, explain(err))
	}
	return nil
}

type openAPI struct {
	ops []*operation
}

type operation struct {
	method    string   // upper case
	template  string   // "/asks/{id}/reply", relative to ServerPath
	segments  []string // of template
	responses map[string]*response
	statuses  []string // declared, sorted
}

type response struct {
	mediaTypes []string                      // declared, lower case, sorted
	schemas    map[string]*jsonschema.Schema // JSON media types only
}

// newestOpenAPIFile is the OpenAPI document responses are checked against: the newest revision the
// contract emits, which may be one the code does not write as its Revision yet (a revision open
// for work, before it is frozen). A revision only adds optional fields, values and routes, so
// what an older one allows it allows too.
func newestOpenAPIFile() string {
	newest := Revision
	for n := Revision + 1; ; n++ {
		if _, err := files.ReadFile(fmt.Sprintf("schema/openapi.%d.json", n)); err != nil {
			break
		}
		newest = n
	}
	return fmt.Sprintf("schema/openapi.%d.json", newest)
}

var loadOpenAPI = sync.OnceValues(func() (*openAPI, error) {
	openAPIFile := newestOpenAPIFile()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(mustRead(openAPIFile)))
	if err != nil {
		return nil, fmt.Errorf("contract: %s: %w", openAPIFile, err)
	}
	c := newCompiler()
	if err := c.AddResource(openAPIURL, doc); err != nil {
		return nil, fmt.Errorf("contract: %s: %w", openAPIFile, err)
	}
	root, _ := doc.(map[string]any)
	if v, _ := root["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		return nil, fmt.Errorf("contract: %s is OpenAPI %q, not 3.1", openAPIFile, v)
	}
	paths, _ := root["paths"].(map[string]any)
	api := &openAPI{}
	for _, tmpl := range sortedKeys(paths) {
		item, _ := paths[tmpl].(map[string]any)
		for _, method := range sortedKeys(item) {
			switch method {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
			default:
				continue // parameters, summary, ...
			}
			opv, _ := item[method].(map[string]any)
			op := &operation{
				method:    strings.ToUpper(method),
				template:  tmpl,
				segments:  splitPath(tmpl),
				responses: map[string]*response{},
			}
			responses, _ := opv["responses"].(map[string]any)
			for _, key := range sortedKeys(responses) {
				ptr := "/paths/" + escapePointer(tmpl) + "/" + method + "/responses/" + escapePointer(key)
				rv, ptr, err := follow(root, responses[key], ptr)
				if err != nil {
					return nil, fmt.Errorf("contract: %s %s %s: %w", op.method, tmpl, key, err)
				}
				resp := &response{schemas: map[string]*jsonschema.Schema{}}
				content, _ := rv["content"].(map[string]any)
				for _, mt := range sortedKeys(content) {
					lower := strings.ToLower(mt)
					resp.mediaTypes = append(resp.mediaTypes, lower)
					if !isJSON(lower) {
						continue
					}
					if mo, _ := content[mt].(map[string]any); mo == nil || mo["schema"] == nil {
						continue // any JSON
					}
					loc := openAPIURL + "#" + ptr + "/content/" + escapePointer(mt) + "/schema"
					sch, err := c.Compile(loc)
					if err != nil {
						return nil, fmt.Errorf("contract: compiling %s %s %s %s: %w", op.method, tmpl, key, mt, err)
					}
					resp.schemas[lower] = sch
				}
				op.responses[strings.ToUpper(key)] = resp
				op.statuses = append(op.statuses, key)
			}
			api.ops = append(api.ops, op)
		}
	}
	return api, nil
})

// follow resolves a response object's local "$ref" (to components/responses), returning the object
// and its JSON pointer.
func follow(root map[string]any, v any, ptr string) (map[string]any, string, error) {
	for range 8 {
		obj, _ := v.(map[string]any)
		if obj == nil {
			return nil, "", fmt.Errorf("%s is not an object", ptr)
		}
		ref, ok := obj["$ref"].(string)
		if !ok {
			return obj, ptr, nil
		}
		p, ok := strings.CutPrefix(ref, "#")
		if !ok {
			return nil, "", fmt.Errorf("reference %q is outside the document", ref)
		}
		v, ptr = lookupPointer(root, p), p
	}
	return nil, "", fmt.Errorf("%s: too many references", ptr)
}

func lookupPointer(root any, ptr string) any {
	v := root
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		obj, _ := v.(map[string]any)
		if obj == nil {
			return nil
		}
		v = obj[strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)]
	}
	return v
}

func isJSON(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

func splitPath(p string) []string {
	return strings.Split(strings.TrimPrefix(p, "/"), "/")
}

// find returns the operation for method and path, preferring literal segments over parameters.
func (api *openAPI) find(method, path string) (*operation, error) {
	method = strings.ToUpper(method)
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	rel := path
	if rel == ServerPath {
		rel = "/"
	} else if r, ok := strings.CutPrefix(rel, ServerPath+"/"); ok {
		rel = "/" + r
	}
	segs := splitPath(rel)

	var best *operation
	var bestScore []bool
	var otherMethods []string
	for _, op := range api.ops {
		score, ok := matchSegments(op.segments, segs)
		if !ok {
			continue
		}
		if op.method != method {
			otherMethods = append(otherMethods, op.method+" "+op.template)
			continue
		}
		if best == nil || moreLiteral(score, bestScore) {
			best, bestScore = op, score
		}
	}
	if best != nil {
		return best, nil
	}
	if len(otherMethods) > 0 {
		slices.Sort(otherMethods)
		return nil, fmt.Errorf("%w: no %s at %s; the contract declares %s", ErrUnknownOperation, method, path, strings.Join(slices.Compact(otherMethods), ", "))
	}
	return nil, fmt.Errorf("%w: no path of the contract matches %s %s (paths are relative to %s)", ErrUnknownOperation, method, path, ServerPath)
}

// matchSegments matches path segments against a template's, reporting which segments matched
// literally.
func matchSegments(tmpl, segs []string) ([]bool, bool) {
	if len(tmpl) != len(segs) {
		return nil, false
	}
	literal := make([]bool, len(tmpl))
	for i, t := range tmpl {
		switch {
		case t == segs[i]:
			literal[i] = !isParam(t)
		case isParam(t) && segs[i] != "":
		default:
			return nil, false
		}
	}
	return literal, true
}

func isParam(seg string) bool {
	return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}")
}

// moreLiteral reports whether a matched literally at the first segment where a and b differ.
func moreLiteral(a, b []bool) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i]
		}
	}
	return false
}

// response finds the response declared for status: exactly, by its class ("4XX"), or "default".
func (op *operation) response(status int) (*response, string) {
	code := strconv.Itoa(status)
	for _, key := range []string{code, code[:1] + "XX", "DEFAULT"} {
		if r, ok := op.responses[key]; ok {
			if key == "DEFAULT" {
				key = "default"
			}
			return r, key
		}
	}
	return nil, ""
}

// match finds the declared media type for mt, allowing "type/*" and "*/*" in the contract.
func (r *response) match(mt string) (string, bool) {
	mt = strings.ToLower(mt)
	if slices.Contains(r.mediaTypes, mt) {
		return mt, true
	}
	if major, _, ok := strings.Cut(mt, "/"); ok && slices.Contains(r.mediaTypes, major+"/*") {
		return major + "/*", true
	}
	if slices.Contains(r.mediaTypes, "*/*") {
		return "*/*", true
	}
	return "", false
}
