package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The table's indexes. template.yaml declares the same (a test holds the two together).
const (
	// IndexHead is keyed by the ask item's `head` attribute (only ask items have it) and projects
	// the few attributes a poller needs, so that polling an ask costs the same small read however
	// big the ask has grown.
	IndexHead = "head"
	// IndexList is keyed by `lpk`/`lsk`: lists that no base-table key orders. A space's MCP tasks
	// newest first (lpk TASKS#<space>), every lease by expiry for the reaper (lpk
	// LEASES#<shard>), and a credential's closed asks by close time (lpk
	// CLOSEDBY#<space>#<credential>, on the close-time markers). Only items with an lpk are in it.
	IndexList = "list"
)

// TTLAttribute is the attribute DynamoDB's time to live reads: epoch seconds.
const TTLAttribute = "expiresAt"

// TableInput is the table as template.yaml declares it (AskTable): keys, indexes, stream and
// billing. Time to live and point-in-time recovery are set after creation; see CreateTable.
func TableInput(name string) *dynamodb.CreateTableInput {
	str := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	key := func(n string, t types.KeyType) types.KeySchemaElement {
		return types.KeySchemaElement{AttributeName: aws.String(n), KeyType: t}
	}
	return &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			str(attrPK), str(attrSK), str(attrHead), str(attrLPK), str(attrLSK),
		},
		KeySchema: []types.KeySchemaElement{key(attrPK, types.KeyTypeHash), key(attrSK, types.KeyTypeRange)},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{
				IndexName: aws.String(IndexHead),
				KeySchema: []types.KeySchemaElement{key(attrHead, types.KeyTypeHash)},
				Projection: &types.Projection{
					ProjectionType:   types.ProjectionTypeInclude,
					NonKeyAttributes: []string{attrStatus, attrVersion, attrWaiting, attrUpdatedAt, attrRevision},
				},
			},
			{
				IndexName:  aws.String(IndexList),
				KeySchema:  []types.KeySchemaElement{key(attrLPK, types.KeyTypeHash), key(attrLSK, types.KeyTypeRange)},
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
			},
		},
		StreamSpecification: &types.StreamSpecification{
			StreamEnabled:  aws.Bool(true),
			StreamViewType: types.StreamViewTypeNewImage,
		},
	}
}

// CreateTable creates the table as template.yaml declares it, waits until it is active, and
// turns on time to live (on expiresAt) and point-in-time recovery. A deployment gets the same
// table from CloudFormation; this is for trying the AWS storage without one (serve
// --create-table) and for the tests. A table of that name that exists already is taken as this
// one (and gets the same settings): the SDK sends a create again when its answer was lost, and
// the create sent again finds the table the first one made.
func CreateTable(ctx context.Context, client *dynamodb.Client, name string) error {
	var inUse *types.ResourceInUseException
	if _, err := client.CreateTable(ctx, TableInput(name)); err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("dynamodb: create table %s: %w", name, err)
	}
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 200*time.Millisecond, 5*time.Second
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 5*time.Minute); err != nil {
		return fmt.Errorf("dynamodb: table %s never became active: %w", name, err)
	}
	_, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(TTLAttribute), Enabled: aws.Bool(true),
		},
	})
	if err != nil {
		return fmt.Errorf("dynamodb: time to live on %s: %w", name, err)
	}
	_, err = client.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{
		TableName: aws.String(name),
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: aws.Bool(true),
		},
	})
	if err != nil {
		return fmt.Errorf("dynamodb: point-in-time recovery on %s: %w", name, err)
	}
	return nil
}

// EnsureTable creates the table unless one of that name exists already, in which case it is
// used as it is.
func EnsureTable(ctx context.Context, client *dynamodb.Client, name string) error {
	_, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	var missing *types.ResourceNotFoundException
	switch {
	case err == nil:
		return nil
	case errors.As(err, &missing):
		return CreateTable(ctx, client, name)
	default:
		return fmt.Errorf("dynamodb: describe table %s: %w", name, err)
	}
}
