package dynamo_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/dynamo"
)

// tableShape is what template.yaml and dynamo.TableInput both say of the table.
type tableShape struct {
	BillingMode             string                  `yaml:"BillingMode"`
	AttributeDefinitions    []attributeDefinition   `yaml:"AttributeDefinitions"`
	KeySchema               []keyElement            `yaml:"KeySchema"`
	GlobalSecondaryIndexes  []globalSecondaryIndex  `yaml:"GlobalSecondaryIndexes"`
	StreamSpecification     streamSpecification     `yaml:"StreamSpecification"`
	TimeToLiveSpecification timeToLiveSpecification `yaml:"TimeToLiveSpecification"`
	PointInTime             pointInTime             `yaml:"PointInTimeRecoverySpecification"`
}

type attributeDefinition struct {
	AttributeName string `yaml:"AttributeName"`
	AttributeType string `yaml:"AttributeType"`
}

type keyElement struct {
	AttributeName string `yaml:"AttributeName"`
	KeyType       string `yaml:"KeyType"`
}

type globalSecondaryIndex struct {
	IndexName  string       `yaml:"IndexName"`
	KeySchema  []keyElement `yaml:"KeySchema"`
	Projection projection   `yaml:"Projection"`
}

type projection struct {
	ProjectionType   string   `yaml:"ProjectionType"`
	NonKeyAttributes []string `yaml:"NonKeyAttributes"`
}

type streamSpecification struct {
	StreamViewType string `yaml:"StreamViewType"`
}

type timeToLiveSpecification struct {
	AttributeName string `yaml:"AttributeName"`
	Enabled       bool   `yaml:"Enabled"`
}

type pointInTime struct {
	PointInTimeRecoveryEnabled bool `yaml:"PointInTimeRecoveryEnabled"`
}

// templateTable reads AskTable from the repository's template.yaml.
func templateTable(t *testing.T) tableShape {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct {
		Resources map[string]struct {
			Type       string     `yaml:"Type"`
			Properties tableShape `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &tmpl); err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	r, ok := tmpl.Resources["AskTable"]
	if !ok || r.Type != "AWS::DynamoDB::Table" {
		t.Fatalf("template.yaml has no AskTable of type AWS::DynamoDB::Table")
	}
	return r.Properties
}

// shapeOf is what a CreateTableInput (with CreateTable's settings after creation) declares.
func shapeOf(in *dynamodb.CreateTableInput) tableShape {
	s := tableShape{
		BillingMode:             string(in.BillingMode),
		StreamSpecification:     streamSpecification{StreamViewType: string(in.StreamSpecification.StreamViewType)},
		TimeToLiveSpecification: timeToLiveSpecification{AttributeName: dynamo.TTLAttribute, Enabled: true},
		PointInTime:             pointInTime{PointInTimeRecoveryEnabled: true},
	}
	for _, a := range in.AttributeDefinitions {
		s.AttributeDefinitions = append(s.AttributeDefinitions, attributeDefinition{aws.ToString(a.AttributeName), string(a.AttributeType)})
	}
	for _, k := range in.KeySchema {
		s.KeySchema = append(s.KeySchema, keyElement{aws.ToString(k.AttributeName), string(k.KeyType)})
	}
	for _, g := range in.GlobalSecondaryIndexes {
		i := globalSecondaryIndex{IndexName: aws.ToString(g.IndexName), Projection: projection{
			ProjectionType: string(g.Projection.ProjectionType), NonKeyAttributes: g.Projection.NonKeyAttributes,
		}}
		for _, k := range g.KeySchema {
			i.KeySchema = append(i.KeySchema, keyElement{aws.ToString(k.AttributeName), string(k.KeyType)})
		}
		s.GlobalSecondaryIndexes = append(s.GlobalSecondaryIndexes, i)
	}
	return s
}

// TestTableMatchesTemplate: the table the tests (and serve --create-table) create is the table a
// deployment gets from template.yaml.
func TestTableMatchesTemplate(t *testing.T) {
	if d := cmp.Diff(templateTable(t), shapeOf(dynamo.TableInput("t"))); d != "" {
		t.Fatalf("template.yaml's AskTable (-) and dynamo.TableInput (+) differ:\n%s", d)
	}
}

// TestCreateTable: the table CreateTable leaves behind is the one declared, time to live and
// point-in-time recovery included, whether it made the table or found it made.
func TestCreateTable(t *testing.T) {
	ctx := context.Background()
	client := moto.DynamoDB()
	name := awstest.Name("created")
	if err := dynamo.CreateTable(ctx, client, name); err != nil {
		t.Fatal(err)
	}
	// A create sent again (its first answer lost) finds its own table: taken as it is.
	if err := dynamo.CreateTable(ctx, client, name); err != nil {
		t.Fatalf("CreateTable of a table that exists: %v", err)
	}
	if err := dynamo.EnsureTable(ctx, client, name); err != nil {
		t.Fatalf("EnsureTable of a table that exists: %v", err)
	}
	desc, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	got := desc.Table
	in := &dynamodb.CreateTableInput{
		AttributeDefinitions: got.AttributeDefinitions, KeySchema: got.KeySchema,
		StreamSpecification: got.StreamSpecification,
	}
	if got.BillingModeSummary != nil {
		in.BillingMode = got.BillingModeSummary.BillingMode
	}
	for _, g := range got.GlobalSecondaryIndexes {
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, gsiOf(g))
	}
	if d := cmp.Diff(shapeOf(dynamo.TableInput(name)), shapeOf(in)); d != "" {
		t.Fatalf("the created table (+) is not the one declared (-):\n%s", d)
	}
	ttl, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	if d := ttl.TimeToLiveDescription; d == nil || aws.ToString(d.AttributeName) != dynamo.TTLAttribute || d.TimeToLiveStatus != "ENABLED" {
		t.Fatalf("time to live: %+v, want enabled on %s", d, dynamo.TTLAttribute)
	}
	backups, err := client.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	if d := backups.ContinuousBackupsDescription; d == nil || d.PointInTimeRecoveryDescription == nil ||
		d.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus != "ENABLED" {
		t.Fatalf("point-in-time recovery is not enabled: %+v", d)
	}
}

func gsiOf(d types.GlobalSecondaryIndexDescription) types.GlobalSecondaryIndex {
	return types.GlobalSecondaryIndex{IndexName: d.IndexName, KeySchema: d.KeySchema, Projection: d.Projection}
}
