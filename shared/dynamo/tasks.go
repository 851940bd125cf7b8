package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

// An MCP task is one item, also in IndexList under its space, newest first:
//
//	pk TASK#<space>#<id>  sk TASK
//	lpk TASKS#<space>     lsk <createdAt>#<id>
const (
	skTask      = "TASK"
	attrTool    = "tool"
	attrMessage = "message"
	attrResult  = "result"
	attrTTLms   = "ttlMs"
)

func taskPK(space, id string) string { return prefixTask + space + "#" + id }
func taskKey(space, id string) item  { return key(taskPK(space, id), skTask) }

// CreateTask stores a new task as it is given; ExpiresAt is the caller's to set (CreatedAt + TTL),
// and DynamoDB deletes the task some time after it. An id already stored in the space is refused.
// TTL is kept to the millisecond.
func (s *Store) CreateTask(ctx context.Context, t *ask.Task) error {
	if !usable(t.Space, t.ID) {
		return unusable("create task", t.Space, t.ID)
	}
	it := newItem(taskPK(t.Space, t.ID), skTask, "task")
	it[attrSpace], it[attrID], it[attrAskID], it[attrTool] = str(t.Space), str(t.ID), str(t.AskID), str(t.Tool)
	it[attrStatus] = str(string(t.Status))
	if t.CredentialID != "" {
		it[attrCredentialID] = str(t.CredentialID)
	}
	if t.Message != "" {
		it[attrMessage] = str(t.Message)
	}
	if t.Result != nil {
		it[attrResult] = bin(t.Result)
	}
	it[attrTTLms] = num(t.TTL.Milliseconds())
	it[attrCreatedAt], it[attrUpdatedAt] = str(formatTime(t.CreatedAt)), str(formatTime(t.UpdatedAt))
	it[attrExpires], it[attrTTL] = str(formatTime(t.ExpiresAt)), ttl(t.ExpiresAt)
	it[attrLPK], it[attrLSK] = str(prefixTasks+t.Space), str(formatTime(t.CreatedAt)+"#"+t.ID)
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: s.table, Item: it,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: names(attrPK),
	})
	if _, failed := isConditionFailed(err); failed {
		return fmt.Errorf("dynamodb: create task %s: %w in the space (%v)", t.ID, ask.ErrAlreadyStored, err)
	} else if err != nil {
		return fmt.Errorf("dynamodb: create task %s: %w", t.ID, err)
	}
	return nil
}

// FindTask returns a task of a space, or ask.ENotFound when there is none or it has expired (now
// is at or after its ExpiresAt, whether or not DynamoDB has deleted it yet).
func (s *Store) FindTask(ctx context.Context, space, id string, now time.Time) (*ask.Task, error) {
	if !usable(space, id) {
		return nil, ask.TaskNotFound(id)
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: taskKey(space, id), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find task %s: %w", id, err)
	}
	if out.Item == nil {
		return nil, ask.TaskNotFound(id)
	}
	t, err := decodeTask(out.Item)
	if err != nil {
		return nil, err
	}
	if t.Space != space || t.ID != id || ask.Expired(t.ExpiresAt, now) {
		return nil, ask.TaskNotFound(id)
	}
	return t, nil
}

// FinishTask moves the working task t.Space/t.ID to t.Status, with t.Message, t.Result and
// t.UpdatedAt, and returns the task as stored afterwards. One UpdateItem, on the condition that
// the task is still working: of racing finishes the first wins, and the others get the winner's
// task back from the failed condition (ReturnValuesOnConditionCheckFailure). The other fields of
// t are not written. A task that is not stored is ask.ENotFound; expiry is not checked. t.Status
// must be terminal.
func (s *Store) FinishTask(ctx context.Context, t *ask.Task) (*ask.Task, error) {
	if !t.Terminal() {
		return nil, fmt.Errorf("dynamodb: finish task %s: status %q is not terminal", t.ID, t.Status)
	}
	if !usable(t.Space, t.ID) {
		return nil, ask.TaskNotFound(t.ID)
	}
	set := "SET #status = :status, #updatedAt = :updated, #revision = :rev"
	var remove string
	values := item{
		":status": str(string(t.Status)), ":updated": str(formatTime(t.UpdatedAt)),
		":rev": num(buildinfo.Revision), ":working": str(string(ask.TaskWorking)),
	}
	if t.Message != "" {
		set += ", #message = :message"
		values[":message"] = str(t.Message)
	} else {
		remove = " REMOVE #message"
	}
	if t.Result != nil {
		set += ", #result = :result"
		values[":result"] = bin(t.Result)
	} else if remove == "" {
		remove = " REMOVE #result"
	} else {
		remove += ", #result"
	}
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: taskKey(t.Space, t.ID),
		UpdateExpression:                    aws.String(set + remove),
		ConditionExpression:                 aws.String("attribute_exists(#pk) AND #status = :working"),
		ExpressionAttributeNames:            names(attrStatus, attrUpdatedAt, attrRevision, attrMessage, attrResult, attrPK),
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	stored := item(nil)
	if e, failed := isConditionFailed(err); failed {
		if e.Item == nil {
			return nil, ask.TaskNotFound(t.ID)
		}
		stored = e.Item // already terminal: the first finish stands
	} else if err != nil {
		return nil, fmt.Errorf("dynamodb: finish task %s: %w", t.ID, err)
	} else {
		stored = out.Attributes
	}
	return decodeTask(stored)
}

// ListTasks returns up to limit of a space's unexpired tasks, newest first (tasks created together
// in descending order of id), after the cursor ("" for the first page), and the cursor of the
// next page: "" when this page holds the last task. The cursor names the last task of the page,
// so a page resumes where the previous one ended even when tasks come, finish or expire in
// between. A cursor this store did not give out is ask.ERequestInvalid. It queries IndexList
// (eventually consistent: a task created or finished a moment ago may show a moment later) and
// leaves out tasks that have expired but that DynamoDB has not deleted yet.
func (s *Store) ListTasks(ctx context.Context, space, cursor string, limit int, now time.Time) ([]*ask.Task, string, error) {
	if limit < 1 {
		return nil, "", nil
	}
	cond := "#lpk = :lpk"
	attrs := names(attrLPK)
	values := item{":lpk": str(prefixTasks + space)}
	if cursor != "" {
		created, id, err := ask.DecodeTaskCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		cond += " AND #lsk < :after"
		attrs["#"+attrLSK] = attrLSK
		values[":after"] = str(created + "#" + id)
	}
	if !usable(space) {
		return nil, "", nil
	}
	var out []*ask.Task
	err := s.query(ctx, &dynamodb.QueryInput{
		IndexName:                 aws.String(IndexList),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  attrs,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(int32(min(limit+1, 1000))),
	}, func(it item) (bool, error) {
		t, err := decodeTask(it)
		if err != nil {
			return false, err
		}
		if now.Before(t.ExpiresAt) {
			out = append(out, t)
		}
		return len(out) <= limit, nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("dynamodb: list tasks: %w", err)
	}
	if len(out) <= limit {
		return out, "", nil
	}
	out = out[:limit]
	last := out[limit-1]
	return out, ask.EncodeTaskCursor(last.CreatedAt, last.ID), nil
}

func decodeTask(it item) (*ask.Task, error) {
	t := &ask.Task{}
	t.Space, _ = getString(it, attrSpace)
	t.ID, _ = getString(it, attrID)
	fail := func(err error) (*ask.Task, error) {
		return nil, fmt.Errorf("dynamodb: decode task %s: %w", t.ID, err)
	}
	if _, err := checkRevision(it); err != nil {
		return fail(err)
	}
	t.AskID, _ = getString(it, attrAskID)
	t.Tool, _ = getString(it, attrTool)
	t.CredentialID, _ = getString(it, attrCredentialID)
	status, _ := getString(it, attrStatus)
	t.Status = ask.TaskStatus(status)
	t.Message, _ = getString(it, attrMessage)
	if r, ok := getBytes(it, attrResult); ok {
		t.Result = r
	}
	ms, _, err := getInt(it, attrTTLms)
	if err != nil {
		return fail(err)
	}
	t.TTL = time.Duration(ms) * time.Millisecond
	if t.CreatedAt, err = mustTime(it, attrCreatedAt); err != nil {
		return fail(err)
	}
	if t.UpdatedAt, err = mustTime(it, attrUpdatedAt); err != nil {
		return fail(err)
	}
	if t.ExpiresAt, err = mustTime(it, attrExpires); err != nil {
		return fail(err)
	}
	return t, nil
}
