package samtemplate

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Values are what a template's references resolve to where it is run: !Ref of a parameter,
// resource or pseudo parameter (AWS::Region), and !GetAtt of a resource's attribute
// ("AskTable.Arn"). A deployment gets them from CloudFormation; shared/awslocal makes up local
// ones.
type Values struct {
	Refs  map[string]string
	Attrs map[string]string
}

// Resolve evaluates a value of the template: a plain scalar, !Ref, !GetAtt or !Sub. Any other
// intrinsic, or a name without a value, is an error that names it.
func (v Values) Resolve(n *yaml.Node) (string, error) {
	if n == nil {
		return "", nil
	}
	switch n.Tag {
	case "!Ref":
		return v.ref(n.Value)
	case "!GetAtt":
		name := n.Value
		if n.Kind == yaml.SequenceNode && len(n.Content) == 2 {
			name = n.Content[0].Value + "." + n.Content[1].Value
		}
		return v.attr(name)
	case "!Sub":
		if n.Kind == yaml.SequenceNode && len(n.Content) == 2 {
			local := Values{Refs: map[string]string{}, Attrs: v.Attrs}
			for k, val := range v.Refs {
				local.Refs[k] = val
			}
			vars := n.Content[1]
			for i := 0; i+1 < len(vars.Content); i += 2 {
				s, err := v.Resolve(vars.Content[i+1])
				if err != nil {
					return "", err
				}
				local.Refs[vars.Content[i].Value] = s
			}
			return local.sub(n.Content[0].Value)
		}
		return v.sub(n.Value)
	}
	if n.Kind == yaml.ScalarNode && (n.Tag == "" || strings.HasPrefix(n.Tag, "!!")) {
		return n.Value, nil
	}
	return "", fmt.Errorf("cannot resolve %s here", Render(n))
}

var subVar = regexp.MustCompile(`\$\{([^}!]+)\}`)

func (v Values) sub(s string) (string, error) {
	var err error
	out := subVar.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		var r string
		var e error
		if strings.Contains(name, ".") && !strings.HasPrefix(name, "AWS::") {
			r, e = v.attr(name)
		} else {
			r, e = v.ref(name)
		}
		if e != nil && err == nil {
			err = e
		}
		return r
	})
	return out, err
}

func (v Values) ref(name string) (string, error) {
	if r, ok := v.Refs[name]; ok {
		return r, nil
	}
	return "", fmt.Errorf("!Ref %s has no value here (known: %s)", name, keys(v.Refs))
}

func (v Values) attr(name string) (string, error) {
	if r, ok := v.Attrs[name]; ok {
		return r, nil
	}
	return "", fmt.Errorf("!GetAtt %s has no value here (known: %s)", name, keys(v.Attrs))
}

func keys(m map[string]string) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// Environment is the environment a function is given: Globals' variables, then its own, each
// resolved with v.
func (t *Template) Environment(f *Function, v Values) (map[string]string, error) {
	out := map[string]string{}
	for _, vars := range []map[string]*yaml.Node{t.GlobalEnv, f.Env} {
		for k, n := range vars {
			s, err := v.Resolve(n)
			if err != nil {
				return nil, fmt.Errorf("%s's %s: %w", f.ID, k, err)
			}
			out[k] = s
		}
	}
	return out, nil
}
