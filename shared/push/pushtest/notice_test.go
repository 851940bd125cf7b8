package pushtest

import (
	"strings"
	"testing"
)

func TestNotice(t *testing.T) {
	good := `{"askId":"a1","title":"p asks","body":"Go?","tag":"ask-a1","url":"/asks/a1","project":"p","group":"project-x",` +
		`"actions":[{"action":"choice-0","title":"Yes","url":"/api/v1/actions/la1.abc.def"},{"action":"choice-1","title":"No","url":"/api/v1/actions/la1.ghi.jkl"}]}`
	n, err := Message{Payload: []byte(good)}.Notice()
	if err != nil || len(n.Actions) != 2 || n.Actions[1].URL != "/api/v1/actions/la1.ghi.jkl" || n.Group != "project-x" {
		t.Fatalf("%+v %v", n, err)
	}
	for name, bad := range map[string]string{
		"not JSON":         `nope`,
		"an unknown field": strings.Replace(good, `"project"`, `"projekt"`, 1),
		"no askId":         strings.Replace(good, `"askId":"a1"`, `"askId":""`, 1),
		"three actions":    strings.Replace(good, `]}`, `,{"action":"choice-2","title":"Maybe","url":"/api/v1/actions/x"}]}`, 1),
		"another origin":   strings.Replace(good, `"/api/v1/actions/la1.abc.def"`, `"https://evil.example/api/v1/actions/x"`, 1),
		"a query":          strings.Replace(good, `"/api/v1/actions/la1.abc.def"`, `"/api/v1/actions/x?choice=1"`, 1),
		"no words":         strings.Replace(good, `"title":"Yes"`, `"title":""`, 1),
		"the same id":      strings.Replace(good, `"choice-1"`, `"choice-0"`, 1),
	} {
		if _, err := (Message{Payload: []byte(bad)}).Notice(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
