package samtemplate

import (
	"regexp"
	"slices"
	"strings"
)

func (s Statement) String() string {
	out := strings.Join(s.Actions, ", ") + " on " + s.Resource
	if s.Condition != "" {
		out += " if " + s.Condition
	}
	return out
}

// gateTouch: an UpdateItem limited to a credential's lastUsedAt (and its keys), as the gate does.
var gateTouch = regexp.MustCompile(`dynamodb:Attributes: \[((pk|sk|lastUsedAt)(, )?)+\]`)

// gateCount: an UpdateItem limited to the items that count failed sign-ins (SIGNIN#<address>), as
// the gate's throttle does (dynamo.SignInThrottle).
var gateCount = regexp.MustCompile(`^\{ForAllValues:StringLike: \{dynamodb:LeadingKeys: \[?"?SIGNIN#\*"?\]?\}\}$`)

// CountsSignIns reports whether some statement lets the gate count failed sign-ins: UpdateItem
// on SIGNIN# items (or on the whole table).
func (f *Function) CountsSignIns() bool {
	for _, s := range f.Statements {
		if slices.Contains(s.Actions, "dynamodb:UpdateItem") && (s.Condition == "" || gateCount.MatchString(s.Condition)) {
			return true
		}
	}
	return false
}

// IsWrite reports whether the statement allows a write, the gate's record of a credential's use
// and its count of failed sign-ins aside.
func (s Statement) IsWrite() bool {
	for _, a := range s.Actions {
		if writeAction(a) && !(a == "dynamodb:UpdateItem" && (gateTouch.MatchString(s.Condition) || gateCount.MatchString(s.Condition))) {
			return true
		}
	}
	return false
}

func writeAction(a string) bool {
	service, verb, _ := strings.Cut(a, ":")
	if strings.HasPrefix(service, "sam:") || service == "sam" {
		return !strings.Contains(verb, "Read")
	}
	if verb == "*" || a == "*" {
		return true
	}
	for _, w := range []string{"Put", "Update", "Delete", "BatchWrite", "TransactWrite", "Create", "ManageConnections"} {
		if strings.HasPrefix(verb, w) {
			return true
		}
	}
	return false
}

// Writes lists the statements that allow a write.
func (f *Function) Writes() []string {
	var out []string
	for _, s := range f.Statements {
		if s.IsWrite() {
			out = append(out, s.String())
		}
	}
	return out
}

// Allows reports whether some statement allows action (on some resource).
func (f *Function) Allows(action string) bool {
	for _, s := range f.Statements {
		if slices.Contains(s.Actions, action) || slices.Contains(s.Actions, "*") {
			return true
		}
	}
	return false
}

// AllowsOn reports whether some statement allows action on a resource for which resource
// returns true (given the statement's rendered Resource).
func (f *Function) AllowsOn(action string, resource func(string) bool) bool {
	for _, s := range f.Statements {
		if (slices.Contains(s.Actions, action) || slices.Contains(s.Actions, "*")) && resource(s.Resource) {
			return true
		}
	}
	return false
}

// HasStatement reports whether f allows every action of s on s's resource, under s's condition.
func (f *Function) HasStatement(s Statement) bool {
	for _, a := range s.Actions {
		found := false
		for _, o := range f.Statements {
			if slices.Contains(o.Actions, a) && o.Resource == s.Resource && o.Condition == s.Condition {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// ActionList is the policy on one line.
func (f *Function) ActionList() string {
	var out []string
	for _, s := range f.Statements {
		out = append(out, s.String())
	}
	return strings.Join(out, "; ")
}

// RouteList is the function's routes on one line.
func (f *Function) RouteList() string {
	var out []string
	for _, e := range f.Events {
		out = append(out, e.Key())
	}
	return strings.Join(out, ", ")
}
