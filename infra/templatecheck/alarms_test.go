package templatecheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/loopback-hq/loopback/shared/samtemplate"
)

// resources reads template.yaml's Resources: logical id → the resource's node.
func resources(t *testing.T) map[string]*yaml.Node {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]*yaml.Node{}
	res := samtemplate.Get(doc.Content[0], "Resources")
	for i := 0; i+1 < len(res.Content); i += 2 {
		out[res.Content[i].Value] = res.Content[i+1]
	}
	return out
}

// at follows keys down a node; nil when one is missing.
func at(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n == nil {
			return nil
		}
		n = samtemplate.Get(n, k)
	}
	return n
}

func value(n *yaml.Node, keys ...string) string {
	if n = at(n, keys...); n == nil {
		return ""
	}
	return n.Tag + " " + n.Value
}

// alarm is what an alarm watches: namespace, metric and its one dimension (as written, !Ref or
// !GetAtt included), and whether it notifies AlarmTopic.
type alarm struct {
	id, namespace, metric, dimension string
	notifies                         bool
}

func alarms(t *testing.T, res map[string]*yaml.Node) []alarm {
	var out []alarm
	for id, r := range res {
		if value(r, "Type") != "!!str AWS::CloudWatch::Alarm" {
			continue
		}
		a := alarm{id: id, namespace: at(r, "Properties", "Namespace").Value, metric: at(r, "Properties", "MetricName").Value}
		if dims := samtemplate.Items(at(r, "Properties", "Dimensions")); len(dims) == 1 {
			a.dimension = at(dims[0], "Name").Value + "=" + value(dims[0], "Value")
		} else {
			t.Errorf("template.yaml: alarm %s has %d dimensions, want one", id, len(dims))
		}
		for _, act := range samtemplate.Items(at(r, "Properties", "AlarmActions")) {
			if act.Tag == "!Ref" && act.Value == "AlarmTopic" {
				a.notifies = true
			}
		}
		if !a.notifies {
			t.Errorf("template.yaml: alarm %s does not notify AlarmTopic (AlarmActions: [!Ref AlarmTopic])", id)
		}
		out = append(out, a)
	}
	return out
}

func hasAlarm(as []alarm, namespace, metric, dimension string) bool {
	for _, a := range as {
		if a.namespace == namespace && a.metric == metric && a.dimension == dimension && a.notifies {
			return true
		}
	}
	return false
}

// TestAlarms: every function has an errors alarm, the MCP function a throttles alarm, every SQS
// queue (the failure destinations) a depth alarm; each notifies AlarmTopic, which mails
// AlarmEmail only when one is given; the upload checker's async invocations have a failure
// destination (a queue, so alarmed).
func TestAlarms(t *testing.T) {
	res := resources(t)
	as := alarms(t, res)
	tmpl := loadTemplate(t)
	for _, f := range tmpl.Functions {
		if !hasAlarm(as, "AWS/Lambda", "Errors", "FunctionName=!Ref "+f.ID) {
			t.Errorf("template.yaml: no alarm on %s's errors (AWS/Lambda Errors, FunctionName !Ref %s, AlarmActions [!Ref AlarmTopic])", f.ID, f.ID)
		}
	}
	if !hasAlarm(as, "AWS/Lambda", "Throttles", "FunctionName=!Ref McpFunction") {
		t.Error("template.yaml: no alarm on McpFunction's throttles")
	}
	queues := 0
	for id, r := range res {
		if value(r, "Type") != "!!str AWS::SQS::Queue" {
			continue
		}
		queues++
		if !hasAlarm(as, "AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName=!GetAtt "+id+".QueueName") {
			t.Errorf("template.yaml: no alarm on the depth of %s (AWS/SQS ApproximateNumberOfMessagesVisible, QueueName !GetAtt %s.QueueName)", id, id)
		}
	}
	if queues < 2 {
		t.Errorf("template.yaml: %d SQS queues, want the stream's and the upload checker's failure queues", queues)
	}
	if value(res["AlarmTopic"], "Type") != "!!str AWS::SNS::Topic" {
		t.Error("template.yaml: no AlarmTopic (AWS::SNS::Topic)")
	}
	sub := res["AlarmEmailSubscription"]
	if value(sub, "Condition") != "!!str HasAlarmEmail" || value(sub, "Properties", "Endpoint") != "!Ref AlarmEmail" {
		t.Error("template.yaml: AlarmEmailSubscription must mail !Ref AlarmEmail under Condition HasAlarmEmail (no subscription when it is empty)")
	}
	check := res["UploadCheckFunction"]
	dest := at(check, "Properties", "EventInvokeConfig", "DestinationConfig", "OnFailure")
	if value(dest, "Type") != "!!str SQS" || value(dest, "Destination") != "!GetAtt UploadCheckFailureQueue.Arn" {
		t.Error("template.yaml: UploadCheckFunction has no EventInvokeConfig failure destination on UploadCheckFailureQueue")
	}
}

// TestEventsStageDeploys: the WebSocket API's stage deploys itself when routes change
// (AutoDeploy); a Deployment resource would be created once and never again.
func TestEventsStageDeploys(t *testing.T) {
	res := resources(t)
	for id, r := range res {
		if value(r, "Type") == "!!str AWS::ApiGatewayV2::Deployment" {
			t.Errorf("template.yaml: %s is an AWS::ApiGatewayV2::Deployment, created once and never redeployed when routes change: use the stage's AutoDeploy", id)
		}
	}
	var stages int
	for id, r := range res {
		if value(r, "Type") != "!!str AWS::ApiGatewayV2::Stage" {
			continue
		}
		stages++
		if value(r, "Properties", "AutoDeploy") != "!!bool true" || at(r, "Properties", "DeploymentId") != nil {
			t.Errorf("template.yaml: %s: want AutoDeploy: true and no DeploymentId", id)
		}
		deps := map[string]bool{}
		for _, d := range samtemplate.Items(at(r, "DependsOn")) {
			deps[d.Value] = true
		}
		for rid, rr := range res {
			if value(rr, "Type") == "!!str AWS::ApiGatewayV2::Route" && !deps[rid] {
				t.Errorf("template.yaml: %s does not depend on %s: its first deployment could miss the route", id, rid)
			}
		}
	}
	if stages != 1 {
		t.Errorf("template.yaml: %d WebSocket stages, want 1", stages)
	}
}

// TestMcpReservationDefault: plain `sam deploy` works on any account, a new one's quota of 10
// included: the reservation is 0 unless asked for (make deploy asks for what the quota allows),
// and 0 leaves ReservedConcurrentExecutions out (Lambda refuses a reservation of 0 as "no
// invocations at all").
func TestMcpReservationDefault(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if got := value(doc.Content[0], "Parameters", "McpReservedConcurrency", "Default"); got != "!!int 0" {
		t.Errorf("template.yaml: McpReservedConcurrency's Default is %q, want 0 (a new account's quota of 10 cannot reserve any)", got)
	}
	rce := at(resources(t)["McpFunction"], "Properties", "ReservedConcurrentExecutions")
	if rce == nil || rce.Tag != "!If" || len(rce.Content) != 3 || rce.Content[0].Value != "ReserveMcp" ||
		rce.Content[2].Tag != "!Ref" || rce.Content[2].Value != "AWS::NoValue" {
		t.Error("template.yaml: McpFunction's ReservedConcurrentExecutions must be !If [ReserveMcp, !Ref McpReservedConcurrency, !Ref AWS::NoValue]")
	}
	cond := value(doc.Content[0], "Conditions", "ReserveMcp")
	if !strings.HasPrefix(cond, "!Not") {
		t.Errorf("template.yaml: Conditions ReserveMcp is %q, want !Not [!Equals [!Ref McpReservedConcurrency, 0]]", cond)
	}
}
