package dynamo

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Slack (ask.SlackStore; docs/design/dynamodb.md):
//
//	link, by space      pk SPACE#<space>                 sk SLACKLINK#<personId>
//	link, by Slack user pk SLACKUSER#<team>#<user>       sk SLACKUSER
//	link code           pk SLACKCODE#<hex of its hash>   sk SLACKCODE   (expiresAt: TTL; an OAuth install's state too)
//	posted message      pk SLACKMSG#<space>#<askId>      sk <channel>
//	space's channel     pk SPACE#<space>                 sk SLACKCHANNEL
const (
	prefixSlackLink    = "SLACKLINK#"
	prefixSlackUser    = "SLACKUSER#"
	prefixSlackCode    = "SLACKCODE#"
	prefixSlackMessage = "SLACKMSG#"
	skSlackUser        = "SLACKUSER"
	skSlackCode        = "SLACKCODE"
	skSlackChannel     = "SLACKCHANNEL"

	attrTeamID   = "teamId"
	attrUserID   = "userId"
	attrUserName = "userName"
	attrLinkedAt = "linkedAt"
	attrChannel  = "channel"
	attrTS       = "ts"
	attrTo       = "to"
)

func slackUserKey(team, user string) item { return key(prefixSlackUser+team+"#"+user, skSlackUser) }
func slackLinkKey(space, person string) item {
	return key(spacePK(space), prefixSlackLink+person)
}
func slackCodeKey(hash []byte) item {
	return key(prefixSlackCode+hex.EncodeToString(hash), skSlackCode)
}

// PutSlackCode implements ask.SlackStore.
func (s *Store) PutSlackCode(ctx context.Context, c *ask.SlackCode) error {
	if len(c.Hash) == 0 || len(c.Hash) > maxHashBytes || !usable(c.Space, c.Person.ID) {
		return unusable("put slack code", c.Space, c.Person.ID)
	}
	it := newItem(prefixSlackCode+hex.EncodeToString(c.Hash), skSlackCode, "slackcode")
	it[attrSpace], it[attrPersonID], it[attrPersonName] = str(c.Space), str(c.Person.ID), str(c.Person.Name)
	it[attrCredentialID], it[attrExpires], it[attrTTL] = str(c.CredentialID), str(formatTime(c.ExpiresAt)), ttl(c.ExpiresAt)
	if _, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it}); err != nil {
		return fmt.Errorf("dynamodb: put slack code: %w", err)
	}
	return nil
}

// TakeSlackCode implements ask.SlackStore: one DeleteItem returning what it deleted, so that of
// racing takers one gets the code; an expired code is deleted all the same.
func (s *Store) TakeSlackCode(ctx context.Context, hash []byte, now time.Time) (*ask.SlackCode, error) {
	if len(hash) == 0 || len(hash) > maxHashBytes {
		return nil, ask.SlackCodeNotFound()
	}
	out, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: s.table, Key: slackCodeKey(hash), ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: take slack code: %w", err)
	}
	if out.Attributes == nil {
		return nil, ask.SlackCodeNotFound()
	}
	it := out.Attributes
	if _, err := checkRevision(it); err != nil {
		return nil, fmt.Errorf("dynamodb: take slack code: %w", err)
	}
	c := &ask.SlackCode{Hash: hash}
	c.Space, _ = getString(it, attrSpace)
	c.Person.ID, _ = getString(it, attrPersonID)
	c.Person.Name, _ = getString(it, attrPersonName)
	c.CredentialID, _ = getString(it, attrCredentialID)
	if c.ExpiresAt, err = mustTime(it, attrExpires); err != nil {
		return nil, fmt.Errorf("dynamodb: take slack code: %w", err)
	}
	if !now.Before(c.ExpiresAt) {
		return nil, ask.SlackCodeNotFound()
	}
	return c, nil
}

func slackLinkItem(pk, sk, typ string, l *ask.SlackLink) item {
	it := newItem(pk, sk, typ)
	it[attrSpace], it[attrPersonID], it[attrPersonName] = str(l.Space), str(l.Person.ID), str(l.Person.Name)
	it[attrCredentialID], it[attrTeamID], it[attrUserID] = str(l.CredentialID), str(l.TeamID), str(l.UserID)
	it[attrUserName], it[attrLinkedAt] = str(l.UserName), str(formatTime(l.LinkedAt))
	return it
}

func readSlackLink(it item) (*ask.SlackLink, error) {
	if _, err := checkRevision(it); err != nil {
		return nil, err
	}
	l := &ask.SlackLink{}
	l.Space, _ = getString(it, attrSpace)
	l.Person.ID, _ = getString(it, attrPersonID)
	l.Person.Name, _ = getString(it, attrPersonName)
	l.CredentialID, _ = getString(it, attrCredentialID)
	l.TeamID, _ = getString(it, attrTeamID)
	l.UserID, _ = getString(it, attrUserID)
	l.UserName, _ = getString(it, attrUserName)
	var err error
	l.LinkedAt, err = mustTime(it, attrLinkedAt)
	return l, err
}

func (s *Store) getSlackLink(ctx context.Context, k item) (*ask.SlackLink, error) {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	if out.Item == nil {
		return nil, ask.SlackLinkNotFound()
	}
	return readSlackLink(out.Item)
}

// PutSlackLink implements ask.SlackStore: the person's earlier link and the Slack user's earlier
// link go in the same transaction that writes both items of the new one.
func (s *Store) PutSlackLink(ctx context.Context, l *ask.SlackLink) error {
	if !usable(l.Space, l.Person.ID) || !usable(l.TeamID, l.UserID) {
		return unusable("put slack link", l.Space, l.Person.ID)
	}
	var writes []types.TransactWriteItem
	del := func(k item) {
		writes = append(writes, types.TransactWriteItem{Delete: &types.Delete{TableName: s.table, Key: k}})
	}
	if old, err := s.getSlackLink(ctx, slackLinkKey(l.Space, l.Person.ID)); err == nil && (old.TeamID != l.TeamID || old.UserID != l.UserID) {
		del(slackUserKey(old.TeamID, old.UserID))
	} else if err != nil && ask.ErrorCode(err) != ask.ENotFound {
		return fmt.Errorf("dynamodb: put slack link: %w", err)
	}
	if old, err := s.getSlackLink(ctx, slackUserKey(l.TeamID, l.UserID)); err == nil && (old.Space != l.Space || old.Person.ID != l.Person.ID) {
		del(slackLinkKey(old.Space, old.Person.ID))
	} else if err != nil && ask.ErrorCode(err) != ask.ENotFound {
		return fmt.Errorf("dynamodb: put slack link: %w", err)
	}
	writes = append(writes,
		types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: slackLinkItem(spacePK(l.Space), prefixSlackLink+l.Person.ID, "slacklink", l)}},
		types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: slackLinkItem(prefixSlackUser+l.TeamID+"#"+l.UserID, skSlackUser, "slackuser", l)}},
	)
	if _, err := s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: writes}); err != nil {
		return fmt.Errorf("dynamodb: put slack link: %w", err)
	}
	return nil
}

// SlackLinkByUser implements ask.SlackStore.
func (s *Store) SlackLinkByUser(ctx context.Context, team, user string) (*ask.SlackLink, error) {
	if !usable(team, user) {
		return nil, ask.SlackLinkNotFound()
	}
	l, err := s.getSlackLink(ctx, slackUserKey(team, user))
	if err != nil && ask.ErrorCode(err) != ask.ENotFound {
		return nil, fmt.Errorf("dynamodb: slack link: %w", err)
	}
	return l, err
}

// SlackLinks implements ask.SlackStore.
func (s *Store) SlackLinks(ctx context.Context, space string) ([]*ask.SlackLink, error) {
	if !usable(space) {
		return nil, nil
	}
	var out []*ask.SlackLink
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :link)"),
		ExpressionAttributeNames:  names(attrPK, attrSK),
		ExpressionAttributeValues: item{":pk": str(spacePK(space)), ":link": str(prefixSlackLink)},
		ConsistentRead:            aws.Bool(true),
	}, func(it item) (bool, error) {
		l, err := readSlackLink(it)
		if err == nil {
			out = append(out, l)
		}
		return true, err
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: slack links: %w", err)
	}
	slices.SortFunc(out, func(x, y *ask.SlackLink) int {
		return cmp.Or(x.LinkedAt.Compare(y.LinkedAt), cmp.Compare(x.Person.ID, y.Person.ID))
	})
	return out, nil
}

// DeleteSlackLink implements ask.SlackStore.
func (s *Store) DeleteSlackLink(ctx context.Context, space, personID string) error {
	if !usable(space, personID) {
		return ask.SlackLinkNotFound()
	}
	l, err := s.getSlackLink(ctx, slackLinkKey(space, personID))
	if err != nil {
		if ask.ErrorCode(err) == ask.ENotFound {
			return err
		}
		return fmt.Errorf("dynamodb: delete slack link: %w", err)
	}
	// The Slack user's item first, and only while it is still this person's (a relink may have
	// moved it): once it is gone, no click answers as the person, whatever happens next.
	_, err = s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: s.table, Key: slackUserKey(l.TeamID, l.UserID),
		ConditionExpression:       aws.String("#space = :space AND #personId = :person"),
		ExpressionAttributeNames:  names(attrSpace, attrPersonID),
		ExpressionAttributeValues: item{":space": str(space), ":person": str(personID)}})
	if _, failed := isConditionFailed(err); failed {
		err = nil // the Slack user links someone else now, or nobody
	}
	if err == nil {
		_, err = s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: s.table, Key: slackLinkKey(space, personID)})
	}
	if err != nil {
		return fmt.Errorf("dynamodb: delete slack link: %w", err)
	}
	return nil
}

// PutSlackMessage implements ask.SlackStore.
func (s *Store) PutSlackMessage(ctx context.Context, m *ask.SlackMessage) error {
	if !usable(m.Space, m.AskID, m.Channel) {
		return unusable("put slack message", m.Space, m.AskID)
	}
	it := newItem(prefixSlackMessage+m.Space+"#"+m.AskID, m.Channel, "slackmessage")
	it[attrSpace], it[attrID], it[attrChannel], it[attrTS], it[attrTo] = str(m.Space), str(m.AskID), str(m.Channel), str(m.TS), str(m.To)
	if _, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it}); err != nil {
		return fmt.Errorf("dynamodb: put slack message: %w", err)
	}
	return nil
}

// SlackMessages implements ask.SlackStore.
func (s *Store) SlackMessages(ctx context.Context, space, askID string) ([]*ask.SlackMessage, error) {
	if !usable(space, askID) {
		return nil, nil
	}
	var out []*ask.SlackMessage
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  names(attrPK),
		ExpressionAttributeValues: item{":pk": str(prefixSlackMessage + space + "#" + askID)},
		ConsistentRead:            aws.Bool(true),
	}, func(it item) (bool, error) {
		m := &ask.SlackMessage{}
		m.Space, _ = getString(it, attrSpace)
		m.AskID, _ = getString(it, attrID)
		m.Channel, _ = getString(it, attrChannel)
		m.TS, _ = getString(it, attrTS)
		m.To, _ = getString(it, attrTo)
		out = append(out, m)
		_, err := checkRevision(it)
		return true, err
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: slack messages: %w", err)
	}
	return out, nil
}

// SlackChannel implements ask.SlackStore.
func (s *Store) SlackChannel(ctx context.Context, space string) (string, error) {
	if !usable(space) {
		return "", nil
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: key(spacePK(space), skSlackChannel), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("dynamodb: slack channel: %w", err)
	}
	if out.Item == nil {
		return "", nil
	}
	ch, _ := getString(out.Item, attrChannel)
	return ch, nil
}

// PutSlackChannel implements ask.SlackStore.
func (s *Store) PutSlackChannel(ctx context.Context, space, channel string) error {
	if !usable(space) {
		return unusable("put slack channel", space, "")
	}
	it := newItem(spacePK(space), skSlackChannel, "slackchannel")
	it[attrSpace], it[attrChannel] = str(space), str(channel)
	if _, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it}); err != nil {
		return fmt.Errorf("dynamodb: put slack channel: %w", err)
	}
	return nil
}

var _ ask.SlackStore = (*Store)(nil)
