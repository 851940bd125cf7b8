package dynamo

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

// A rule is one item, listed under its space; the space's count of rules is one more, written
// in the same transaction as every create and delete, so that the bound on a space's rules holds
// however many are made at once:
//
//	pk SPACE#<space>  sk RULE#<id>   type rule
//	pk SPACE#<space>  sk RULES       type rules   count <the space's rules>
//
// Neither type passes the stream's filter (only ask, connection and credential items do).
const (
	prefixRule        = "RULE#"
	skRules           = "RULES"
	attrEffect        = "effect"
	attrCommandPrefix = "commandPrefix"
	attrPathPattern   = "pathPattern"
	attrDomain        = "domain"
	attrProject       = "project"
	attrAgent         = "agent"
	attrByID          = "byId"
	attrByName        = "byName"
	attrMatches       = "matches"
	attrLastMatched   = "lastMatchedAt"
	attrRuleCount     = "count"
)

func ruleKey(space, id string) item { return key(spacePK(space), prefixRule+id) }

// CreateRule stores a new rule unless its space holds max already (ask.RulesFull).
func (s *Store) CreateRule(ctx context.Context, r *ask.Rule, max int) error {
	if !usable(r.Space, r.ID) {
		return unusable("create rule", r.Space, r.ID)
	}
	it := newItem(spacePK(r.Space), prefixRule+r.ID, "rule")
	it[attrSpace], it[attrID] = str(r.Space), str(r.ID)
	putScope(it, r)
	it[attrCreatedAt], it[attrUpdatedAt] = str(formatTime(r.CreatedAt)), str(formatTime(r.UpdatedAt))
	it[attrMatches] = num(int64(r.Matches))
	if r.LastMatchedAt != nil {
		it[attrLastMatched] = str(formatTime(*r.LastMatchedAt))
	}
	for attempt := 0; ; attempt++ {
		_, err := s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{
				TableName: s.table, Key: key(spacePK(r.Space), skRules),
				UpdateExpression:         aws.String("SET #count = if_not_exists(#count, :zero) + :one, #type = :type, #revision = :revision"),
				ConditionExpression:      aws.String("attribute_not_exists(#count) OR #count < :max"),
				ExpressionAttributeNames: names(attrRuleCount, attrType, attrRevision),
				ExpressionAttributeValues: item{
					":zero": num(0), ":one": num(1), ":max": num(int64(max)), ":type": str("rules"), ":revision": num(buildinfo.Revision),
				},
			}},
			{Put: &types.Put{
				TableName: s.table, Item: it,
				ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
				ExpressionAttributeNames: names(attrPK),
			}},
		}})
		reasons := cancelReasons(err)
		switch {
		case err == nil:
			return nil
		case onlyConflicts(reasons) && attempt < 5:
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
			continue
		case len(reasons) == 2 && reasons[0] == "ConditionalCheckFailed":
			return ask.RulesFull(max)
		case len(reasons) == 2 && reasons[1] == "ConditionalCheckFailed":
			return fmt.Errorf("dynamodb: rule %s: %w", r.ID, ask.ErrAlreadyStored)
		default:
			return fmt.Errorf("dynamodb: create rule %s: %w", r.ID, err)
		}
	}
}

func putScope(it item, r *ask.Rule) {
	it[attrEffect], it[attrTool] = str(r.Effect), str(r.Tool)
	for name, v := range map[string]string{
		attrCommandPrefix: r.CommandPrefix, attrPathPattern: r.PathPattern, attrDomain: r.Domain,
		attrProject: r.Project, attrAgent: r.Agent, attrByName: r.CreatedBy.Name,
	} {
		if v != "" {
			it[name] = str(v)
		}
	}
	it[attrByID] = str(r.CreatedBy.ID)
}

func decodeRule(it item) (*ask.Rule, error) {
	r := &ask.Rule{}
	r.Space, _ = getString(it, attrSpace)
	r.ID, _ = getString(it, attrID)
	r.Effect, _ = getString(it, attrEffect)
	r.Tool, _ = getString(it, attrTool)
	r.CommandPrefix, _ = getString(it, attrCommandPrefix)
	r.PathPattern, _ = getString(it, attrPathPattern)
	r.Domain, _ = getString(it, attrDomain)
	r.Project, _ = getString(it, attrProject)
	r.Agent, _ = getString(it, attrAgent)
	r.CreatedBy.ID, _ = getString(it, attrByID)
	r.CreatedBy.Name, _ = getString(it, attrByName)
	if _, err := checkRevision(it); err != nil {
		return nil, err
	}
	var err error
	if r.CreatedAt, err = mustTime(it, attrCreatedAt); err != nil {
		return nil, err
	}
	if r.UpdatedAt, err = mustTime(it, attrUpdatedAt); err != nil {
		return nil, err
	}
	n, _, err := getInt(it, attrMatches)
	if err != nil {
		return nil, err
	}
	r.Matches = int(n)
	if t, ok, err := getTime(it, attrLastMatched); err != nil {
		return nil, err
	} else if ok {
		r.LastMatchedAt = &t
	}
	return r, nil
}

// Rules lists a space's rules, newest first.
func (s *Store) Rules(ctx context.Context, space string) ([]*ask.Rule, error) {
	out := []*ask.Rule{}
	if !usable(space) {
		return out, nil
	}
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :rule)"),
		ExpressionAttributeNames:  names(attrPK, attrSK),
		ExpressionAttributeValues: item{":pk": str(spacePK(space)), ":rule": str(prefixRule)},
		ConsistentRead:            aws.Bool(true),
	}, func(it item) (bool, error) {
		r, err := decodeRule(it)
		if err != nil {
			return false, err
		}
		out = append(out, r)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: list rules: %w", err)
	}
	slices.SortFunc(out, func(x, y *ask.Rule) int {
		if c := y.CreatedAt.Compare(x.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(y.ID, x.ID)
	})
	return out, nil
}

// UpdateRule replaces a rule's effect, scope, maker and update time, and reads back what it
// keeps into r; ask.ErrNotFound when it is gone.
func (s *Store) UpdateRule(ctx context.Context, r *ask.Rule) error {
	if !usable(r.Space, r.ID) {
		return ask.ErrNotFound
	}
	set := item{}
	putScope(set, r)
	expr := "SET #updatedAt = :updatedAt, #revision = :revision"
	nm := map[string]string{"#pk": attrPK, "#updatedAt": attrUpdatedAt, "#revision": attrRevision}
	vals := item{":updatedAt": str(formatTime(r.UpdatedAt)), ":revision": num(buildinfo.Revision)}
	var remove []string
	for _, a := range []string{attrEffect, attrTool, attrCommandPrefix, attrPathPattern, attrDomain, attrProject, attrAgent, attrByID, attrByName} {
		nm["#"+a] = a
		if v, ok := set[a]; ok {
			expr += ", #" + a + " = :" + a
			vals[":"+a] = v
		} else {
			remove = append(remove, "#"+a)
		}
	}
	if len(remove) > 0 {
		expr += " REMOVE " + strings.Join(remove, ", ")
	}
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: ruleKey(r.Space, r.ID),
		UpdateExpression:          aws.String(expr),
		ConditionExpression:       aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames:  nm,
		ExpressionAttributeValues: vals,
		ReturnValues:              types.ReturnValueAllNew,
	})
	if _, failed := isConditionFailed(err); failed {
		return ask.ErrNotFound
	} else if err != nil {
		return fmt.Errorf("dynamodb: update rule %s: %w", r.ID, err)
	}
	stored, err := decodeRule(out.Attributes)
	if err != nil {
		return fmt.Errorf("dynamodb: update rule %s: %w", r.ID, err)
	}
	r.CreatedAt, r.Matches, r.LastMatchedAt = stored.CreatedAt, stored.Matches, stored.LastMatchedAt
	return nil
}

// DeleteRule removes a rule, and counts it out of its space; ask.ErrNotFound when it is gone.
func (s *Store) DeleteRule(ctx context.Context, space, id string) error {
	if !usable(space, id) {
		return ask.ErrNotFound
	}
	for attempt := 0; ; attempt++ {
		_, err := s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Delete: &types.Delete{
				TableName: s.table, Key: ruleKey(space, id),
				ConditionExpression:      aws.String("attribute_exists(#pk)"),
				ExpressionAttributeNames: names(attrPK),
			}},
			{Update: &types.Update{
				TableName: s.table, Key: key(spacePK(space), skRules),
				UpdateExpression:          aws.String("SET #count = #count - :one"),
				ConditionExpression:       aws.String("#count > :zero"),
				ExpressionAttributeNames:  names(attrRuleCount),
				ExpressionAttributeValues: item{":one": num(1), ":zero": num(0)},
			}},
		}})
		reasons := cancelReasons(err)
		switch {
		case err == nil:
			return nil
		case onlyConflicts(reasons) && attempt < 5:
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
			continue
		case len(reasons) == 2 && reasons[0] == "ConditionalCheckFailed":
			return ask.ErrNotFound
		default:
			return fmt.Errorf("dynamodb: delete rule %s: %w", id, err)
		}
	}
}

// CountRuleMatch adds one to a rule's matches and moves its last match forward to at.
func (s *Store) CountRuleMatch(ctx context.Context, space, id string, at time.Time) error {
	if !usable(space, id) {
		return ask.ErrNotFound
	}
	t := str(formatTime(at))
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: ruleKey(space, id),
		UpdateExpression:          aws.String("SET #matches = #matches + :one"),
		ConditionExpression:       aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames:  names(attrPK, attrMatches),
		ExpressionAttributeValues: item{":one": num(1)},
	})
	if _, failed := isConditionFailed(err); failed {
		return ask.ErrNotFound
	} else if err != nil {
		return fmt.Errorf("dynamodb: count a match of rule %s: %w", id, err)
	}
	// The last match moves only forward: a separate conditional write, so that two matches
	// counted out of order leave the later time.
	_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: ruleKey(space, id),
		UpdateExpression:          aws.String("SET #lastMatchedAt = :at"),
		ConditionExpression:       aws.String("attribute_exists(#pk) AND (attribute_not_exists(#lastMatchedAt) OR #lastMatchedAt < :at)"),
		ExpressionAttributeNames:  names(attrPK, attrLastMatched),
		ExpressionAttributeValues: item{":at": t},
	})
	if _, failed := isConditionFailed(err); failed {
		return nil
	} else if err != nil {
		return fmt.Errorf("dynamodb: count a match of rule %s: %w", id, err)
	}
	return nil
}
