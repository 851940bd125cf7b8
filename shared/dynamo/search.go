package dynamo

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Search (contract revision 6). DynamoDB has no full-text index, so each ask keeps a small item
// of its words under its space's partition, in creation order:
//
//	pk SPACE#<space>  sk FIND#<createdAt>#<id>   type find: id, kind, status, project?, title,
//	                                             createdAt, updatedAt, closedAt?, version (N),
//	                                             words (S: ask.SearchWordList, at most 8 KB)
//
// written after every write of the ask (conditional on an older version, so a late write never
// undoes a newer one). A search is a Query of the space's FIND# items, newest first, with a
// filter (`contains(words, " term")` for each term: a word-prefix match; kind, status,
// project), strongly consistent, examining at most findMaxExamined items a request; the page
// then ends early with a cursor, and the client asks again. For a page with terms, the asks
// that matched are read (BatchGetItem) for the highlight. The limits are docs/design/search.md's.

const (
	prefixFind = "FIND#"
	typeFind   = "find"
	attrWords  = "words"
	attrTitle  = "title"
	attrProj   = "project"

	// findWordBytes bounds an ask's word list: words past it are not searchable on DynamoDB.
	findWordBytes = 8000
	// findPerQuery and findMaxExamined bound what one search request reads.
	findPerQuery    = 250
	findMaxExamined = 1000
)

func findSK(createdAt, id string) string { return prefixFind + createdAt + "#" + id }

// putFind writes a's search item at version, unless a newer version's is there already.
func (s *Store) putFind(ctx context.Context, a *ask.Ask, version int) error {
	title, text := ask.SearchDoc(a)
	created := formatTime(a.CreatedAt)
	it := newItem(spacePK(a.Space), findSK(created, a.ID), typeFind)
	it[attrID], it[attrKind], it[attrStatus] = str(a.ID), str(string(a.Kind)), str(string(a.Status))
	it[attrTitle], it[attrCreatedAt], it[attrUpdatedAt] = str(title), str(created), str(formatTime(a.UpdatedAt))
	it[attrVersion] = num(int64(version))
	it[attrWords] = str(ask.SearchWordList(title, text, findWordBytes))
	if a.Project != "" {
		it[attrProj] = str(a.Project)
	}
	if a.ClosedAt != nil {
		it[attrClosedAt] = str(formatTime(*a.ClosedAt))
	}
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: s.table, Item: it,
		ConditionExpression:       aws.String("attribute_not_exists(#pk) OR #version < :v"),
		ExpressionAttributeNames:  names(attrPK, attrVersion),
		ExpressionAttributeValues: item{":v": num(int64(version))},
	})
	if _, ok := isConditionFailed(err); ok {
		return nil
	}
	if err != nil {
		return fmt.Errorf("search item of %s (the ask itself is written): %w", a.ID, err)
	}
	return nil
}

// SearchAsks implements ask.Store (see the top of this file).
func (s *Store) SearchAsks(ctx context.Context, space string, q ask.SearchQuery) (ask.SearchResult, error) {
	var res ask.SearchResult
	if !usable(space) {
		return res, nil
	}
	ns := map[string]string{"#pk": attrPK, "#sk": attrSK}
	vs := item{":pk": str(spacePK(space)), ":find": str(prefixFind)}
	var filter []string
	for i, t := range q.Terms {
		ns["#words"] = attrWords
		v := fmt.Sprintf(":t%d", i)
		vs[v] = str(" " + t)
		filter = append(filter, "contains(#words, "+v+")")
	}
	if q.Kind != "" {
		ns["#kind"] = attrKind
		vs[":kind"] = str(string(q.Kind))
		filter = append(filter, "#kind = :kind")
	}
	if st := ask.StateStatuses(q.State); st != nil {
		ns["#status"] = attrStatus
		var in []string
		for i, v := range st {
			k := fmt.Sprintf(":s%d", i)
			vs[k] = str(string(v))
			in = append(in, k)
		}
		filter = append(filter, "#status IN ("+strings.Join(in, ", ")+")")
	}
	if q.Project != "" {
		ns["#project"] = attrProj
		vs[":project"] = str(q.Project)
		filter = append(filter, "#project = :project")
	}
	var start item
	if q.After != nil {
		if !usable(space, q.After.ID) {
			return res, nil
		}
		start = key(spacePK(space), findSK(formatTime(q.After.CreatedAt), q.After.ID))
	}
	in := &dynamodb.QueryInput{
		TableName:                 s.table,
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :find)"),
		ExpressionAttributeNames:  ns,
		ExpressionAttributeValues: vs,
		ScanIndexForward:          aws.Bool(false),
		ConsistentRead:            aws.Bool(true),
	}
	if len(filter) > 0 {
		in.FilterExpression = aws.String(strings.Join(filter, " AND "))
	}
	for {
		in.ExclusiveStartKey = start
		in.Limit = aws.Int32(int32(min(findPerQuery, findMaxExamined-res.Examined)))
		out, err := s.client.Query(ctx, in)
		if err != nil {
			return ask.SearchResult{}, fmt.Errorf("dynamodb: search: %w", err)
		}
		res.Examined += int(out.ScannedCount)
		for i, it := range out.Items {
			r, err := findRow(it)
			if err != nil {
				return ask.SearchResult{}, fmt.Errorf("dynamodb: search: %w", err)
			}
			res.Rows = append(res.Rows, r)
			if len(res.Rows) == q.Limit {
				if i < len(out.Items)-1 || out.LastEvaluatedKey != nil {
					res.Next = &ask.SearchCursor{CreatedAt: r.CreatedAt, ID: r.ID}
				}
				return s.searchTexts(ctx, space, q, res)
			}
		}
		if out.LastEvaluatedKey == nil {
			break
		}
		start = out.LastEvaluatedKey
		if res.Examined >= findMaxExamined {
			c, err := findCursor(start)
			if err != nil {
				return ask.SearchResult{}, fmt.Errorf("dynamodb: search: %w", err)
			}
			res.Next = c
			break
		}
	}
	return s.searchTexts(ctx, space, q, res)
}

// searchTexts reads the asks of a page with terms, for their highlights.
func (s *Store) searchTexts(ctx context.Context, space string, q ask.SearchQuery, res ask.SearchResult) (ask.SearchResult, error) {
	if len(q.Terms) == 0 || len(res.Rows) == 0 {
		return res, nil
	}
	ids := make([]string, len(res.Rows))
	for i, r := range res.Rows {
		ids[i] = r.ID
	}
	asks, err := s.getAsks(ctx, space, ids)
	if err != nil {
		return ask.SearchResult{}, fmt.Errorf("dynamodb: search: %w", err)
	}
	for i := range res.Rows {
		if a := asks[res.Rows[i].ID]; a != nil {
			_, res.Rows[i].Text = ask.SearchDoc(a)
		}
	}
	return res, nil
}

// findRow reads a search item.
func findRow(it item) (ask.SearchRow, error) {
	var r ask.SearchRow
	var kind, status, created, updated string
	r.ID, _ = getString(it, attrID)
	kind, _ = getString(it, attrKind)
	status, _ = getString(it, attrStatus)
	r.Kind, r.Status = ask.Kind(kind), ask.Status(status)
	r.Project, _ = getString(it, attrProj)
	r.Title, _ = getString(it, attrTitle)
	created, _ = getString(it, attrCreatedAt)
	updated, _ = getString(it, attrUpdatedAt)
	var err error
	if r.CreatedAt, err = ask.ParseTime(created); err != nil {
		return r, err
	}
	if r.UpdatedAt, err = ask.ParseTime(updated); err != nil {
		return r, err
	}
	if c, ok := getString(it, attrClosedAt); ok {
		t, err := ask.ParseTime(c)
		if err != nil {
			return r, err
		}
		r.ClosedAt = &t
	}
	return r, nil
}

// findCursor reads where a Query stopped (its LastEvaluatedKey) as a search cursor.
func findCursor(k item) (*ask.SearchCursor, error) {
	sk, _ := getString(k, attrSK)
	at, id, ok := strings.Cut(strings.TrimPrefix(sk, prefixFind), "#")
	if !ok {
		return nil, fmt.Errorf("search: a key that is no search item's: %q", sk)
	}
	t, err := ask.ParseTime(at)
	if err != nil {
		return nil, err
	}
	return &ask.SearchCursor{CreatedAt: t, ID: id}, nil
}
