package dynamo

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

var _ ask.UploadStore = (*Store)(nil)

// An upload is two items:
//
//	pk UPLOAD#<space>#<id>        sk UPLOAD    the ticket and what became of it; every state change
//	                                           is one conditional write on this item
//	pk UPTOKEN#<hex of token hash> sk UPTOKEN  which upload a token opens: {space, id}. Its key is
//	                                           the hash alone, so a hash is stored once in all spaces
//	pk UPBLOB#<space hash>/<id>   sk UPBLOB    whose bytes an object key names: {space, id}, for the
//	                                           checker of bytes that went straight to S3, whose
//	                                           event names the space only by its hash
//
// All three carry expiresAt (TTL) two days past the ticket's expiry while it is not stored, so that
// a late PUT is still told "gone"; storing the upload removes it from all of them, in one
// transaction. The sweep reaps every upload no ask uses a day after its ticket expired (its object
// and then its items, upload.Service.Reap), before the TTL would: the TTL is the backstop for
// tickets whose bytes never arrived. The upload item of an upload no ask uses (UseUpload removes
// them) is in IndexList for the reaper:
//
//	lpk UPREAP#<shard>  lsk <expires>#<space>#<id>
//
// A credential's tickets per window are counted in one item each (TakeUploadQuota):
//
//	pk UPQUOTA#<space>#<credential>  sk <window start>  n, and a TTL a day past the window
const (
	prefixUpReap    = "UPREAP#"
	prefixUpQuota   = "UPQUOTA#"
	attrCredential  = "credential"
	attrUsed        = "used"
	attrCount       = "n"
	uploadTTLAfter  = 2 * ask.UploadGrace
	skUpload        = "UPLOAD"
	skUploadToken   = "UPTOKEN"
	prefixUpload    = "UPLOAD#"
	prefixUpToken   = "UPTOKEN#"
	skUploadBlob    = "UPBLOB"
	prefixUpBlob    = "UPBLOB#"
	attrRefusal     = "refusal"
	attrContentType = "contentType"
	attrMaxBytes    = "maxBytes"
	attrState       = "state"
	attrSize        = "size"
	attrStoredAt    = "storedAt"
)

func uploadPK(space, id string) string { return prefixUpload + space + "#" + id }
func uploadTokenPK(hash []byte) string { return prefixUpToken + hex.EncodeToString(hash) }
func uploadKey(space, id string) item  { return key(uploadPK(space, id), skUpload) }
func uploadTokenKey(hash []byte) item  { return key(uploadTokenPK(hash), skUploadToken) }
func uploadBlobKey(k ask.BlobKey) item { return key(prefixUpBlob+k.String(), skUploadBlob) }

// CreateUpload stores a new upload ticket (pending unless u.State says otherwise): the upload and
// its token, in one transaction. An id already stored in the space, or a token hash already
// stored in any space, is refused.
func (s *Store) CreateUpload(ctx context.Context, u *ask.Upload) error {
	if len(u.TokenHash) == 0 {
		return errors.New("dynamodb: create upload: no token hash")
	}
	if !usable(u.Space, u.ID) || len(u.TokenHash) > maxHashBytes {
		return unusable("create upload", u.Space, u.ID)
	}
	state := u.State
	if state == "" {
		state = ask.UploadPending
	}
	up := newItem(uploadPK(u.Space, u.ID), skUpload, "upload")
	up[attrSpace], up[attrID], up[attrTokenHash] = str(u.Space), str(u.ID), bin(u.TokenHash)
	up[attrContentType], up[attrMaxBytes] = str(u.ContentType), num(u.MaxBytes)
	up[attrState], up[attrSize] = str(string(state)), num(u.Size)
	up[attrCreatedAt], up[attrExpires] = str(formatTime(u.CreatedAt)), str(formatTime(u.ExpiresAt))
	if u.Refusal != "" {
		up[attrRefusal] = str(u.Refusal)
	}
	if u.Credential != "" {
		up[attrCredential] = str(u.Credential)
	}
	if u.Used {
		up[attrUsed] = boolean(true)
	} else {
		up[attrLPK], up[attrLSK] = str(uploadReapShard(u.Space, u.ID)), str(formatTime(u.ExpiresAt)+"#"+u.Space+"#"+u.ID)
	}
	tok := newItem(uploadTokenPK(u.TokenHash), skUploadToken, "uploadToken")
	tok[attrSpace], tok[attrID] = str(u.Space), str(u.ID)
	bk, err := ask.UploadBlobKey(u.Space, u.ID)
	if err != nil {
		return fmt.Errorf("dynamodb: create upload: %w", err)
	}
	blob := newItem(prefixUpBlob+bk.String(), skUploadBlob, "uploadBlob")
	blob[attrSpace], blob[attrID] = str(u.Space), str(u.ID)
	if u.StoredAt != nil {
		up[attrStoredAt] = str(formatTime(*u.StoredAt))
	} else {
		up[attrTTL] = ttl(u.ExpiresAt.Add(uploadTTLAfter))
		tok[attrTTL], blob[attrTTL] = up[attrTTL], up[attrTTL]
	}
	taken, err := s.putNew(ctx, up, tok, blob)
	if taken {
		return fmt.Errorf("dynamodb: create upload: upload %s (or its token) is %w (%v)", u.ID, ask.ErrAlreadyStored, err)
	} else if err != nil {
		return fmt.Errorf("dynamodb: create upload: %w", err)
	}
	u.State = state
	return nil
}

// UploadByToken finds an upload of a space by the hash of its token, whatever its state: the
// token item (which names the upload), then the upload, both read strongly consistently.
func (s *Store) UploadByToken(ctx context.Context, space string, tokenHash []byte) (*ask.Upload, error) {
	if len(tokenHash) == 0 || len(tokenHash) > maxHashBytes || !usable(space) {
		return nil, ask.UploadNotFound()
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: uploadTokenKey(tokenHash), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find upload: %w", err)
	}
	if out.Item == nil {
		return nil, ask.UploadNotFound()
	}
	if sp, _ := getString(out.Item, attrSpace); sp != space {
		return nil, ask.UploadNotFound()
	}
	id, _ := getString(out.Item, attrID)
	u, err := s.getUpload(ctx, space, id)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(u.TokenHash, tokenHash) {
		return nil, ask.UploadNotFound()
	}
	return u, nil
}

// getUpload reads an upload of a space by id, strongly consistently, or EUploadNotFound.
func (s *Store) getUpload(ctx context.Context, space, id string) (*ask.Upload, error) {
	if !usable(space, id) {
		return nil, ask.UploadNotFound()
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: uploadKey(space, id), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: read upload: %w", err)
	}
	if out.Item == nil {
		return nil, ask.UploadNotFound()
	}
	u, err := decodeUpload(out.Item)
	if err != nil {
		return nil, err
	}
	if u.Space != space || u.ID != id {
		return nil, ask.UploadNotFound()
	}
	return u, nil
}

// ClaimUpload moves a pending, unexpired upload to claimed in one conditional UpdateItem
// (#state = pending AND #expires > now). When the condition fails, the upload as it was comes
// back with the failure and says why.
func (s *Store) ClaimUpload(ctx context.Context, space, id string, now time.Time) (*ask.Upload, error) {
	if !usable(space, id) {
		return nil, ask.UploadNotFound()
	}
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: uploadKey(space, id),
		UpdateExpression:         aws.String("SET #state = :claimed, #revision = :rev"),
		ConditionExpression:      aws.String("attribute_exists(#pk) AND #state = :pending AND #expires > :now"),
		ExpressionAttributeNames: names(attrState, attrRevision, attrPK, attrExpires),
		ExpressionAttributeValues: item{
			":claimed": str(string(ask.UploadClaimed)), ":pending": str(string(ask.UploadPending)),
			":now": str(formatTime(now)), ":rev": num(buildinfo.Revision),
		},
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if e, failed := isConditionFailed(err); failed {
		if e.Item == nil {
			return nil, ask.UploadNotFound()
		}
		u, err := decodeUpload(e.Item)
		if err != nil {
			return nil, err
		}
		return nil, u.ClaimRefusal(now)
	} else if err != nil {
		return nil, fmt.Errorf("dynamodb: claim upload: %w", err)
	}
	return decodeUpload(out.Attributes)
}

// ReleaseUpload moves a claimed upload back to pending; an upload in any other state (or none) is
// left as it is.
func (s *Store) ReleaseUpload(ctx context.Context, space, id string) error {
	if !usable(space, id) {
		return nil
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: uploadKey(space, id),
		UpdateExpression:         aws.String("SET #state = :pending, #revision = :rev"),
		ConditionExpression:      aws.String("#state = :claimed"),
		ExpressionAttributeNames: names(attrState, attrRevision),
		ExpressionAttributeValues: item{
			":claimed": str(string(ask.UploadClaimed)), ":pending": str(string(ask.UploadPending)),
			":rev": num(buildinfo.Revision),
		},
	})
	if _, failed := isConditionFailed(err); failed {
		return nil
	} else if err != nil {
		return fmt.Errorf("dynamodb: release upload: %w", err)
	}
	return nil
}

// MarkUploadStored moves a claimed upload to stored, with its size and time, and takes it and its
// token off the TTL, in one transaction conditional on the upload being claimed. An upload that
// is not claimed is ask.EUploadGone; an unknown one ask.EUploadNotFound.
func (s *Store) MarkUploadStored(ctx context.Context, space, id string, size int64, at time.Time) error {
	u, err := s.getUpload(ctx, space, id)
	if err != nil {
		return err
	}
	gone := ask.UploadNotClaimed(id)
	if u.State != ask.UploadClaimed {
		return gone
	}
	ops := []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: s.table, Key: uploadKey(space, id),
			UpdateExpression:         aws.String("SET #state = :stored, #size = :size, #storedAt = :at, #revision = :rev REMOVE #" + attrTTL),
			ConditionExpression:      aws.String("#state = :claimed"),
			ExpressionAttributeNames: names(attrState, attrSize, attrStoredAt, attrRevision, attrTTL),
			ExpressionAttributeValues: item{
				":stored": str(string(ask.UploadStored)), ":claimed": str(string(ask.UploadClaimed)),
				":size": num(size), ":at": str(formatTime(at)), ":rev": num(buildinfo.Revision),
			},
		}},
		{Update: &types.Update{
			TableName: s.table, Key: uploadTokenKey(u.TokenHash),
			UpdateExpression:          aws.String("SET #revision = :rev REMOVE #" + attrTTL),
			ConditionExpression:       aws.String("#space = :space AND #id = :id"),
			ExpressionAttributeNames:  names(attrRevision, attrTTL, attrSpace, attrID),
			ExpressionAttributeValues: item{":rev": num(buildinfo.Revision), ":space": str(space), ":id": str(id)},
		}},
	}
	if bk, err := ask.UploadBlobKey(space, id); err == nil {
		ops = append(ops, types.TransactWriteItem{Update: &types.Update{
			TableName: s.table, Key: uploadBlobKey(bk),
			UpdateExpression:          aws.String("SET #revision = :rev REMOVE #" + attrTTL),
			ConditionExpression:       aws.String("attribute_exists(#pk)"),
			ExpressionAttributeNames:  names(attrRevision, attrTTL, attrPK),
			ExpressionAttributeValues: item{":rev": num(buildinfo.Revision)},
		}})
	}
	for attempt := 0; ; attempt++ {
		_, err = s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: ops})
		r := cancelReasons(err)
		switch {
		case err == nil:
			return nil
		case len(r) > 0 && r[0] == "ConditionalCheckFailed":
			return gone
		case onlyConflicts(r) && attempt < maxConflictRetries:
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
		default:
			return fmt.Errorf("dynamodb: mark upload stored: %w", err)
		}
	}
}

// StoredUpload returns a stored upload of a space, or ask.EUploadNotFound.
func (s *Store) StoredUpload(ctx context.Context, space, id string) (*ask.Upload, error) {
	u, err := s.getUpload(ctx, space, id)
	if err != nil {
		return nil, err
	}
	if u.State != ask.UploadStored {
		return nil, ask.UploadNotFound()
	}
	return u, nil
}

// UploadByID returns an upload of a space, whatever its state.
func (s *Store) UploadByID(ctx context.Context, space, id string) (*ask.Upload, error) {
	return s.getUpload(ctx, space, id)
}

// UploadByBlob finds an upload by its blob key: the UPBLOB item (which names the upload), then
// the upload, both read strongly consistently.
func (s *Store) UploadByBlob(ctx context.Context, k ask.BlobKey) (*ask.Upload, error) {
	if k.IsZero() {
		return nil, ask.UploadNotFound()
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: uploadBlobKey(k), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find upload by blob: %w", err)
	}
	if out.Item == nil {
		return nil, ask.UploadNotFound()
	}
	space, _ := getString(out.Item, attrSpace)
	id, _ := getString(out.Item, attrID)
	if want, err := ask.UploadBlobKey(space, id); err != nil || want != k {
		return nil, ask.UploadNotFound()
	}
	return s.getUpload(ctx, space, id)
}

// RefuseUpload moves a pending or claimed upload to refused, with the reason, in one conditional
// UpdateItem. The upload keeps its TTL: DynamoDB forgets it a day after its ticket expired.
func (s *Store) RefuseUpload(ctx context.Context, space, id, reason string) error {
	if reason == "" {
		return errors.New("dynamodb: refuse upload: no reason")
	}
	if !usable(space, id) {
		return ask.UploadNotFound()
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: uploadKey(space, id),
		UpdateExpression:         aws.String("SET #state = :refused, #refusal = :reason, #revision = :rev"),
		ConditionExpression:      aws.String("attribute_exists(#pk) AND (#state = :pending OR #state = :claimed)"),
		ExpressionAttributeNames: names(attrState, attrRefusal, attrRevision, attrPK),
		ExpressionAttributeValues: item{
			":refused": str(string(ask.UploadRefused)), ":reason": str(reason),
			":pending": str(string(ask.UploadPending)), ":claimed": str(string(ask.UploadClaimed)),
			":rev": num(buildinfo.Revision),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if e, failed := isConditionFailed(err); failed {
		if e.Item == nil {
			return ask.UploadNotFound()
		}
		u, err := decodeUpload(e.Item)
		if err != nil {
			return err
		}
		return u.RefuseRefusal()
	} else if err != nil {
		return fmt.Errorf("dynamodb: refuse upload: %w", err)
	}
	return nil
}

func decodeUpload(it item) (*ask.Upload, error) {
	u := &ask.Upload{}
	u.Space, _ = getString(it, attrSpace)
	u.ID, _ = getString(it, attrID)
	fail := func(err error) (*ask.Upload, error) {
		return nil, fmt.Errorf("dynamodb: decode upload %s: %w", u.ID, err)
	}
	if _, err := checkRevision(it); err != nil {
		return fail(err)
	}
	u.TokenHash, _ = getBytes(it, attrTokenHash)
	u.ContentType, _ = getString(it, attrContentType)
	state, _ := getString(it, attrState)
	u.State = ask.UploadState(state)
	u.Refusal, _ = getString(it, attrRefusal)
	u.Credential, _ = getString(it, attrCredential)
	u.Used = getBool(it, attrUsed)
	var err error
	if u.MaxBytes, _, err = getInt(it, attrMaxBytes); err != nil {
		return fail(err)
	}
	if u.Size, _, err = getInt(it, attrSize); err != nil {
		return fail(err)
	}
	if u.CreatedAt, err = mustTime(it, attrCreatedAt); err != nil {
		return fail(err)
	}
	if u.ExpiresAt, err = mustTime(it, attrExpires); err != nil {
		return fail(err)
	}
	stored, ok, err := getTime(it, attrStoredAt)
	if err != nil {
		return fail(err)
	}
	if ok {
		u.StoredAt = &stored
	}
	return u, nil
}

func uploadReapShard(space, id string) string {
	h := fnv.New32a()
	h.Write([]byte(space + "\x00" + id))
	return prefixUpReap + strconv.Itoa(int(h.Sum32()%leaseShards))
}

// TakeUploadQuota counts one more ticket in the credential's window item, in one conditional
// UpdateItem (ADD n, if n is below max or not there yet).
func (s *Store) TakeUploadQuota(ctx context.Context, space, credential string, window time.Time, max int) error {
	if max < 1 {
		return ask.UploadQuotaSpent(max, window)
	}
	if !usable(space, credential) {
		return unusable("take upload quota", space, credential)
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(prefixUpQuota+space+"#"+credential, formatTime(window)),
		UpdateExpression:         aws.String("ADD #n :one SET #type = :type, #revision = :rev, #" + attrTTL + " = :ttl"),
		ConditionExpression:      aws.String("attribute_not_exists(#n) OR #n < :max"),
		ExpressionAttributeNames: names(attrCount, attrType, attrRevision, attrTTL),
		ExpressionAttributeValues: item{
			":one": num(1), ":max": num(int64(max)), ":type": str("uploadQuota"),
			":rev": num(buildinfo.Revision), ":ttl": ttl(window.Add(ask.UploadWindow + ask.UploadGrace)),
		},
	})
	if _, failed := isConditionFailed(err); failed {
		return ask.UploadQuotaSpent(max, window)
	} else if err != nil {
		return fmt.Errorf("dynamodb: take upload quota: %w", err)
	}
	return nil
}

// UseUpload marks a stored upload used and takes it out of IndexList, in one conditional
// UpdateItem (#state = stored).
func (s *Store) UseUpload(ctx context.Context, space, id string) error {
	if !usable(space, id) {
		return ask.UploadNotFound()
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: uploadKey(space, id),
		UpdateExpression:          aws.String("SET #used = :true, #revision = :rev REMOVE #lpk, #lsk"),
		ConditionExpression:       aws.String("attribute_exists(#pk) AND #state = :stored"),
		ExpressionAttributeNames:  names(attrUsed, attrRevision, attrLPK, attrLSK, attrPK, attrState),
		ExpressionAttributeValues: item{":true": boolean(true), ":rev": num(buildinfo.Revision), ":stored": str(string(ask.UploadStored))},
	})
	if _, failed := isConditionFailed(err); failed {
		return ask.UploadNotFound()
	} else if err != nil {
		return fmt.Errorf("dynamodb: use upload: %w", err)
	}
	return nil
}

// ReapableUploads queries IndexList's reap partitions (one Query each, never a Scan) for uploads
// whose ticket expired at or before `before`, and merges them. The index is eventually
// consistent: an upload used a moment ago may still be listed, which RetireUpload's condition
// catches.
func (s *Store) ReapableUploads(ctx context.Context, before time.Time, limit int) ([]*ask.Upload, error) {
	if limit < 1 {
		return nil, nil
	}
	var out []*ask.Upload
	err := s.dueOnShards(ctx, prefixUpReap, before, limit, func(it item) (bool, error) {
		u, err := decodeUpload(it)
		if err != nil || u.Used || u.ExpiresAt.After(before) {
			return false, err
		}
		out = append(out, u)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: reapable uploads: %w", err)
	}
	slices.SortFunc(out, func(x, y *ask.Upload) int {
		return cmp.Or(x.ExpiresAt.Compare(y.ExpiresAt), cmp.Compare(x.Space, y.Space), cmp.Compare(x.ID, y.ID))
	})
	return out[:min(limit, len(out))], nil
}

// RetireUpload refuses an unused, expired upload in one conditional UpdateItem.
func (s *Store) RetireUpload(ctx context.Context, space, id string, before time.Time, reason string) (bool, error) {
	if reason == "" {
		return false, errors.New("dynamodb: retire upload: no reason")
	}
	if !usable(space, id) {
		return false, nil
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: uploadKey(space, id),
		UpdateExpression:         aws.String("SET #state = :refused, #refusal = if_not_exists(#refusal, :reason), #revision = :rev REMOVE #storedAt"),
		ConditionExpression:      aws.String("attribute_exists(#pk) AND attribute_not_exists(#used) AND #expires <= :before"),
		ExpressionAttributeNames: names(attrState, attrRefusal, attrRevision, attrStoredAt, attrPK, attrUsed, attrExpires),
		ExpressionAttributeValues: item{
			":refused": str(string(ask.UploadRefused)), ":reason": str(reason),
			":rev": num(buildinfo.Revision), ":before": str(formatTime(before)),
		},
	})
	if _, failed := isConditionFailed(err); failed {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("dynamodb: retire upload: %w", err)
	}
	return true, nil
}

// DeleteUpload deletes a refused upload's three items in one transaction, conditional on the
// upload being refused.
func (s *Store) DeleteUpload(ctx context.Context, space, id string) error {
	u, err := s.getUpload(ctx, space, id)
	if ask.ErrorCode(err) == ask.EUploadNotFound {
		return nil
	} else if err != nil {
		return err
	}
	if u.State != ask.UploadRefused {
		return nil
	}
	ops := []types.TransactWriteItem{
		{Delete: &types.Delete{
			TableName: s.table, Key: uploadKey(space, id),
			ConditionExpression:       aws.String("#state = :refused"),
			ExpressionAttributeNames:  names(attrState),
			ExpressionAttributeValues: item{":refused": str(string(ask.UploadRefused))},
		}},
		{Delete: &types.Delete{
			TableName: s.table, Key: uploadTokenKey(u.TokenHash),
			ConditionExpression:       aws.String("attribute_not_exists(#pk) OR (#space = :space AND #id = :id)"),
			ExpressionAttributeNames:  names(attrPK, attrSpace, attrID),
			ExpressionAttributeValues: item{":space": str(space), ":id": str(id)},
		}},
	}
	if bk, err := ask.UploadBlobKey(space, id); err == nil {
		ops = append(ops, types.TransactWriteItem{Delete: &types.Delete{TableName: s.table, Key: uploadBlobKey(bk)}})
	}
	for attempt := 0; ; attempt++ {
		_, err = s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: ops})
		r := cancelReasons(err)
		switch {
		case err == nil:
			return nil
		case len(r) > 0 && slices.Contains(r, "ConditionalCheckFailed"):
			return nil // no longer refused, or the token is another's: left as it is
		case onlyConflicts(r) && attempt < maxConflictRetries:
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
		default:
			return fmt.Errorf("dynamodb: delete upload: %w", err)
		}
	}
}
