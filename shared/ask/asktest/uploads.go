package asktest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testUploadStore runs the conformance suite for ask.UploadStore.
func testUploadStore(t *testing.T, open func(t *testing.T) ask.UploadStore) {
	tests := []struct {
		name string
		fn   func(*testing.T, ask.UploadStore)
	}{
		{"CreateAndFind", testUploadCreateAndFind},
		{"Duplicates", testUploadDuplicates},
		{"SpacesNeverCross", testUploadSpaces},
		{"ClaimOnce", testUploadClaimOnce},
		{"ClaimExpired", testUploadClaimExpired},
		{"ReleaseThenClaim", testUploadRelease},
		{"MarkStored", testUploadMarkStored},
		{"MarkStoredNeedsClaim", testUploadMarkStoredNeedsClaim},
		{"RacingClaims", testUploadRace},
		{"ByIDAndBlob", testUploadByIDAndBlob},
		{"Refuse", testUploadRefuse},
		{"RefuseNeverStored", testUploadRefuseStored},
		{"Quota", testUploadQuota},
		{"RacingQuota", testUploadQuotaRace},
		{"Use", testUploadUse},
		{"Reap", testUploadReap},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// newUpload is a pending upload of a new space, expiring a quarter of an hour after base.
func newUpload() *ask.Upload {
	return &ask.Upload{
		ID: ask.NewUploadID(), Space: newSpace(), TokenHash: newHash(), ContentType: ask.ImagePNG,
		MaxBytes: ask.MaxUploadBytes, State: ask.UploadPending, CreatedAt: base, ExpiresAt: at(ask.UploadTTL),
	}
}

func createUpload(t *testing.T, s ask.UploadStore, u *ask.Upload) {
	t.Helper()
	if err := s.CreateUpload(context.Background(), u); err != nil {
		t.Fatalf("CreateUpload: %v", err)
	}
}

func testUploadCreateAndFind(t *testing.T, s ask.UploadStore) {
	ctx := context.Background()
	u := newUpload()
	u.ContentType, u.MaxBytes = ask.ImageWebP, 1234
	want := *u
	createUpload(t, s, u)
	got, err := s.UploadByToken(ctx, u.Space, bytes.Clone(u.TokenHash))
	if err != nil {
		t.Fatalf("UploadByToken: %v", err)
	}
	same(t, "the upload found by its token", &want, got)
	_, err = s.UploadByToken(ctx, u.Space, newHash())
	wantRefusal(t, err, ask.UploadNotFound(), "UploadByToken of an unknown hash")
	_, err = s.UploadByToken(ctx, u.Space, u.TokenHash[:16])
	wantCode(t, err, ask.EUploadNotFound, "UploadByToken of a prefix of the hash")
	_, err = s.UploadByToken(ctx, u.Space, nil)
	wantCode(t, err, ask.EUploadNotFound, "UploadByToken of no hash")
	_, err = s.StoredUpload(ctx, u.Space, u.ID)
	wantCode(t, err, ask.EUploadNotFound, "StoredUpload of a pending upload")
	_, err = s.StoredUpload(ctx, u.Space, ask.NewUploadID())
	wantCode(t, err, ask.EUploadNotFound, "StoredUpload of an unknown id")
}

func testUploadDuplicates(t *testing.T, s ask.UploadStore) {
	ctx := context.Background()
	u := newUpload()
	createUpload(t, s, u)
	dupID := newUpload()
	dupID.ID, dupID.Space = u.ID, u.Space
	wantSentinel(t, s.CreateUpload(ctx, dupID), ask.ErrAlreadyStored, "CreateUpload of an id already stored in the space")
	dupToken := newUpload()
	dupToken.TokenHash = bytes.Clone(u.TokenHash)
	wantSentinel(t, s.CreateUpload(ctx, dupToken), ask.ErrAlreadyStored, "CreateUpload of a token hash already stored")
	got, err := s.UploadByToken(ctx, u.Space, u.TokenHash)
	if err != nil || got.ID != u.ID {
		t.Fatalf("after refused duplicates, UploadByToken = %+v, %v; want the first upload", got, err)
	}
}

func testUploadSpaces(t *testing.T, s ask.UploadStore) {
	ctx := context.Background()
	u := newUpload()
	createUpload(t, s, u)
	other := newSpace()
	_, err := s.UploadByToken(ctx, other, u.TokenHash)
	wantCode(t, err, ask.EUploadNotFound, "UploadByToken from another space")
	_, err = s.ClaimUpload(ctx, other, u.ID, base)
	wantRefusal(t, err, ask.UploadNotFound(), "ClaimUpload from another space")
	err = s.MarkUploadStored(ctx, other, u.ID, 10, base)
	wantCode(t, err, ask.EUploadNotFound, "MarkUploadStored from another space")
	if _, err := s.ClaimUpload(ctx, u.Space, u.ID, base); err != nil {
		t.Fatalf("ClaimUpload in its own space: %v", err)
	}
	if err := s.ReleaseUpload(ctx, other, u.ID); err != nil {
		t.Fatalf("ReleaseUpload from another space: %v", err)
	}
	if err := s.MarkUploadStored(ctx, u.Space, u.ID, 10, at(time.Minute)); err != nil {
		t.Fatalf("MarkUploadStored: a release from another space must not have released it: %v", err)
	}
	_, err = s.StoredUpload(ctx, other, u.ID)
	wantCode(t, err, ask.EUploadNotFound, "StoredUpload from another space")
}

func testUploadClaimOnce(t *testing.T, s ask.UploadStore) {
	ctx := context.Background()
	u := newUpload()
	createUpload(t, s, u)
	got, err := s.ClaimUpload(ctx, u.Space, u.ID, at(time.Minute))
	if err != nil {
		t.Fatalf("ClaimUpload: %v", err)
	}
	want := *u
	want.State = ask.UploadClaimed
	same(t, "the claimed upload", &want, got)
	_, err = s.ClaimUpload(ctx, u.Space, u.ID, at(time.Minute))
	wantRefusal(t, err, got.ClaimRefusal(at(time.Minute)), "ClaimUpload a second time (it is claimed)")
	found, err := s.UploadByToken(ctx, u.Space, u.TokenHash)
	if err != nil || found.State != ask.UploadClaimed {
		t.Fatalf("UploadByToken after the claim = %+v, %v; want it claimed", found, err)
	}
	_, err = s.ClaimUpload(ctx, u.Space, ask.NewUploadID(), base)
	wantCode(t, err, ask.EUploadNotFound, "ClaimUpload of an unknown id")
}

func testUploadClaimExpired(t *testing.T, s ask.UploadStore) {
	ctx := context.Background()
	u := newUpload()
	createUpload(t, s, u)
	_, err := s.ClaimUpload(ctx, u.Space, u.ID, u.ExpiresAt)
	wantRefusal(t, err, u.ClaimRefusal(u.ExpiresAt), "ClaimUpload at the moment it expires")
	_, err = s.ClaimUpload(ctx, u.Space, u.ID, u.ExpiresAt.Add(time.Hour))
	wantRefusal(t, err, u.ClaimRefusal(u.ExpiresAt), "ClaimUpload after it expired")
	if _, err := s.ClaimUpload(ctx, u.Space, u.ID, u.ExpiresAt.Add(-time.Microsecond)); err != nil {
		t.Fatalf("ClaimUpload a microsecond before it expires: %v", err)
	}
}

func testUploadRelease(t *testing.T, s ask.UploadStore) {
	ctx := context.Background()
	u := newUpload()
	createUpload(t, s, u)
	if err := s.ReleaseUpload(ctx, u.Space, u.ID); err != nil {
		t.Fatalf("ReleaseUpload of a pending upload: %v", err)
	}
	for i := range 3 {
		if _, err := s.ClaimUpload(ctx, u.Space, u.ID, base); err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
		if err := s.ReleaseUpload(ctx, u.Space, u.ID); err != nil {
			t.Fatalf("release %d: %v", i, err)
		}
		got, err := s.UploadByToken(ctx, u.Space, u.TokenHash)
		if err != nil || got.State != ask.UploadPending {
			t.Fatalf("after release %d: %+v, %v; want it pending", i, got, err)
		}
	}
	if err := s.ReleaseUpload(ctx, u.Space, ask.NewUploadID()); err != nil {
		t.Fatalf("ReleaseUpload of an unknown id: %v", err)
	}
}

func testUploadMarkStored(t *testing.T, s ask.UploadStore) {
	ctx := context.Background()
	u := newUpload()
	createUpload(t, s, u)
	if _, err := s.ClaimUpload(ctx, u.Space, u.ID, at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	storedAt := at(2 * time.Minute)
	if err := s.MarkUploadStored(ctx, u.Space, u.ID, 4321, storedAt); err != nil {
		t.Fatalf("MarkUploadStored: %v", err)
	}
	want := *u
	want.State, want.Size, want.StoredAt = ask.UploadStored, 4321, &storedAt
	got, err := s.StoredUpload(ctx, u.Space, u.ID)
	if err != nil {
		t.Fatalf("StoredUpload: %v", err)
	}
	same(t, "the stored upload", &want, got)
	byToken, err := s.UploadByToken(ctx, u.Space, u.TokenHash)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "the stored upload found by its token", &want, byToken)

	// Stored is final: no claim, release or second store changes it, even after it expired.
	_, err = s.ClaimUpload(ctx, u.Space, u.ID, at(time.Minute))
	wantRefusal(t, err, want.ClaimRefusal(at(time.Minute)), "ClaimUpload of a stored upload")
	if err := s.ReleaseUpload(ctx, u.Space, u.ID); err != nil {
		t.Fatalf("ReleaseUpload of a stored upload: %v", err)
	}
	err = s.MarkUploadStored(ctx, u.Space, u.ID, 1, at(3*time.Minute))
	wantRefusal(t, err, ask.UploadNotClaimed(u.ID), "MarkUploadStored a second time")
	got, err = s.StoredUpload(ctx, u.Space, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "the stored upload after attempts to change it", &want, got)
	if got, err = s.StoredUpload(ctx, u.Space, u.ID); err != nil || got.Size != 4321 {
		t.Fatalf("StoredUpload long after it expired: %+v, %v", got, err)
	}
}

func testUploadMarkStoredNeedsClaim(t *testing.T, s ask.UploadStore) {
	ctx := context.Background()
	u := newUpload()
	createUpload(t, s, u)
	err := s.MarkUploadStored(ctx, u.Space, u.ID, 10, base)
	wantRefusal(t, err, ask.UploadNotClaimed(u.ID), "MarkUploadStored of a pending upload")
	err = s.MarkUploadStored(ctx, u.Space, ask.NewUploadID(), 10, base)
	wantRefusal(t, err, ask.UploadNotFound(), "MarkUploadStored of an unknown id")
	_, err = s.StoredUpload(ctx, u.Space, u.ID)
	wantCode(t, err, ask.EUploadNotFound, "StoredUpload after a refused MarkUploadStored")
}

func testUploadRace(t *testing.T, s ask.UploadStore) {
	const n = 8
	ctx := context.Background()
	for round := range 10 {
		u := newUpload()
		createUpload(t, s, u)
		var errs [n]error
		race(n, func(i int) { _, errs[i] = s.ClaimUpload(ctx, u.Space, u.ID, base) })
		wins := 0
		for i, err := range errs {
			if err == nil {
				wins++
				continue
			}
			wantRefusal(t, err, (&ask.Upload{State: ask.UploadClaimed}).ClaimRefusal(base), fmt.Sprintf("round %d: losing claim %d", round, i))
		}
		if wins != 1 {
			t.Fatalf("round %d: %d of %d racing claims won, want exactly 1", round, wins, n)
		}
	}
}

// testUploadByIDAndBlob: an upload is found by its space and id, and by its blob key, in every
// state; another space's id, and a key of another space's hash or another id, find nothing.
func testUploadByIDAndBlob(t *testing.T, s ask.UploadStore) {
	ctx := context.Background()
	u := newUpload()
	want := *u
	createUpload(t, s, u)
	got, err := s.UploadByID(ctx, u.Space, u.ID)
	if err != nil {
		t.Fatalf("UploadByID: %v", err)
	}
	same(t, "the pending upload by id", &want, got)
	key, err := ask.UploadBlobKey(u.Space, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err = s.UploadByBlob(ctx, key)
	if err != nil {
		t.Fatalf("UploadByBlob: %v", err)
	}
	same(t, "the pending upload by blob key", &want, got)

	_, err = s.UploadByID(ctx, newSpace(), u.ID)
	wantCode(t, err, ask.EUploadNotFound, "UploadByID in another space")
	_, err = s.UploadByID(ctx, u.Space, ask.NewUploadID())
	wantCode(t, err, ask.EUploadNotFound, "UploadByID of an unknown id")
	other, _ := ask.UploadBlobKey(newSpace(), u.ID)
	_, err = s.UploadByBlob(ctx, other)
	wantCode(t, err, ask.EUploadNotFound, "UploadByBlob of the id under another space's hash")
	unknown, _ := ask.UploadBlobKey(u.Space, ask.NewUploadID())
	_, err = s.UploadByBlob(ctx, unknown)
	wantCode(t, err, ask.EUploadNotFound, "UploadByBlob of an unknown id")
	_, err = s.UploadByBlob(ctx, ask.BlobKey{})
	wantCode(t, err, ask.EUploadNotFound, "UploadByBlob of the zero key")

	if _, err := s.ClaimUpload(ctx, u.Space, u.ID, base); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkUploadStored(ctx, u.Space, u.ID, 99, at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, err = s.UploadByBlob(ctx, key); err != nil || got.State != ask.UploadStored || got.Size != 99 {
		t.Fatalf("UploadByBlob of the stored upload = %+v, %v", got, err)
	}
}

// testUploadRefuse: a pending or a claimed upload can be refused, with its reason; refused is
// final (no claim, no store), and refusing it again is no error and keeps the first reason.
func testUploadRefuse(t *testing.T, s ask.UploadStore) {
	ctx := context.Background()
	for _, claimed := range []bool{false, true} {
		u := newUpload()
		createUpload(t, s, u)
		if claimed {
			if _, err := s.ClaimUpload(ctx, u.Space, u.ID, base); err != nil {
				t.Fatal(err)
			}
		}
		const reason = "the body is not a PNG image: it looks like SVG"
		if err := s.RefuseUpload(ctx, u.Space, u.ID, reason); err != nil {
			t.Fatalf("RefuseUpload (claimed %v): %v", claimed, err)
		}
		want := *u
		want.State, want.Refusal = ask.UploadRefused, reason
		got, err := s.UploadByID(ctx, u.Space, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		same(t, "the refused upload", &want, got)
		if err := s.RefuseUpload(ctx, u.Space, u.ID, "another reason"); err != nil {
			t.Fatalf("RefuseUpload a second time: %v", err)
		}
		if got, _ := s.UploadByID(ctx, u.Space, u.ID); got == nil || got.Refusal != reason {
			t.Fatalf("after a second refusal: %+v, want the first reason kept", got)
		}
		_, err = s.ClaimUpload(ctx, u.Space, u.ID, base)
		wantRefusal(t, err, want.ClaimRefusal(base), "ClaimUpload of a refused upload")
		err = s.MarkUploadStored(ctx, u.Space, u.ID, 1, base)
		wantRefusal(t, err, ask.UploadNotClaimed(u.ID), "MarkUploadStored of a refused upload")
		_, err = s.StoredUpload(ctx, u.Space, u.ID)
		wantCode(t, err, ask.EUploadNotFound, "StoredUpload of a refused upload")
	}
	err := s.RefuseUpload(ctx, newSpace(), ask.NewUploadID(), "why")
	wantCode(t, err, ask.EUploadNotFound, "RefuseUpload of an unknown upload")
}

// testUploadRefuseStored: a stored upload is never refused: its bytes were checked and asks show
// them (a late or repeated S3 event must not take them away).
func testUploadRefuseStored(t *testing.T, s ask.UploadStore) {
	ctx := context.Background()
	u := newUpload()
	createUpload(t, s, u)
	if _, err := s.ClaimUpload(ctx, u.Space, u.ID, base); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkUploadStored(ctx, u.Space, u.ID, 7, base); err != nil {
		t.Fatal(err)
	}
	err := s.RefuseUpload(ctx, u.Space, u.ID, "late")
	wantCode(t, err, ask.EUploadGone, "RefuseUpload of a stored upload")
	if got, err := s.StoredUpload(ctx, u.Space, u.ID); err != nil || got.Refusal != "" {
		t.Fatalf("StoredUpload after a refused refusal = %+v, %v", got, err)
	}
}

// storedUpload creates an upload of a new space that expired at expires, and stores it.
func storedUpload(t *testing.T, s ask.UploadStore, expires time.Time) *ask.Upload {
	t.Helper()
	ctx := context.Background()
	u := newUpload()
	u.ExpiresAt = expires
	createUpload(t, s, u)
	if _, err := s.ClaimUpload(ctx, u.Space, u.ID, expires.Add(-time.Minute)); err != nil {
		t.Fatalf("ClaimUpload: %v", err)
	}
	if err := s.MarkUploadStored(ctx, u.Space, u.ID, 10, expires.Add(-time.Minute)); err != nil {
		t.Fatalf("MarkUploadStored: %v", err)
	}
	return u
}

// testUploadQuota: a credential takes at most max tickets per window; another credential, another
// space and the next window count apart.
func testUploadQuota(t *testing.T, s ask.UploadStore) {
	ctx := context.Background()
	space, cred, w := newSpace(), "cred_"+ask.NewID()[:10], at(0).Truncate(time.Hour)
	for i := range 3 {
		if err := s.TakeUploadQuota(ctx, space, cred, w, 3); err != nil {
			t.Fatalf("ticket %d of 3: %v", i+1, err)
		}
	}
	err := s.TakeUploadQuota(ctx, space, cred, w, 3)
	if ask.ErrorCode(err) != ask.ETooMany {
		t.Fatalf("the 4th ticket of 3 = %v, want %s", err, ask.ETooMany)
	}
	for what, err := range map[string]error{
		"another credential": s.TakeUploadQuota(ctx, space, cred+"x", w, 3),
		"another space":      s.TakeUploadQuota(ctx, newSpace(), cred, w, 3),
		"the next window":    s.TakeUploadQuota(ctx, space, cred, w.Add(time.Hour), 3),
	} {
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	if err := s.TakeUploadQuota(ctx, space, cred, w.Add(time.Hour), 0); ask.ErrorCode(err) != ask.ETooMany {
		t.Errorf("a cap of 0 = %v, want %s", err, ask.ETooMany)
	}
}

// testUploadQuotaRace: of 12 tickets taken at once against a cap of 5, exactly 5 are counted.
func testUploadQuotaRace(t *testing.T, s ask.UploadStore) {
	ctx := context.Background()
	space, cred, w := newSpace(), "cred_"+ask.NewID()[:10], at(0).Truncate(time.Hour)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, over := 0, 0
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.TakeUploadQuota(ctx, space, cred, w, 5)
			mu.Lock()
			defer mu.Unlock()
			switch ask.ErrorCode(err) {
			case "":
				ok++
			case ask.ETooMany:
				over++
			default:
				t.Errorf("TakeUploadQuota: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok != 5 || over != 7 {
		t.Fatalf("%d taken and %d refused, want 5 and 7", ok, over)
	}
}

// testUploadUse: only a stored upload can be used; using it again changes nothing.
func testUploadUse(t *testing.T, s ask.UploadStore) {
	ctx := context.Background()
	p := newUpload()
	createUpload(t, s, p)
	if err := s.UseUpload(ctx, p.Space, p.ID); ask.ErrorCode(err) != ask.EUploadNotFound {
		t.Fatalf("UseUpload of a pending upload = %v, want %s", err, ask.EUploadNotFound)
	}
	if err := s.UseUpload(ctx, p.Space, ask.NewUploadID()); ask.ErrorCode(err) != ask.EUploadNotFound {
		t.Fatalf("UseUpload of an unknown upload = %v, want %s", err, ask.EUploadNotFound)
	}
	u := storedUpload(t, s, at(ask.UploadTTL))
	if err := s.UseUpload(ctx, newSpace(), u.ID); ask.ErrorCode(err) != ask.EUploadNotFound {
		t.Fatalf("UseUpload from another space = %v, want %s", err, ask.EUploadNotFound)
	}
	for range 2 {
		if err := s.UseUpload(ctx, u.Space, u.ID); err != nil {
			t.Fatalf("UseUpload: %v", err)
		}
	}
	got, err := s.StoredUpload(ctx, u.Space, u.ID)
	if err != nil || !got.Used || got.State != ask.UploadStored {
		t.Fatalf("after UseUpload: %+v, %v", got, err)
	}
}

// reapable lists the reapable uploads of the given spaces (the store may hold other tests').
func reapable(t *testing.T, s ask.UploadStore, before time.Time, spaces ...string) []string {
	t.Helper()
	list, err := s.ReapableUploads(context.Background(), before, 10000)
	if err != nil {
		t.Fatalf("ReapableUploads: %v", err)
	}
	var out []string
	for _, u := range list {
		if slices.Contains(spaces, u.Space) {
			out = append(out, u.ID)
		}
	}
	return out
}

// testUploadReap: uploads no ask uses are listed once their ticket expired before the cut-off,
// oldest first, whatever their state; retiring one refuses it unless an ask uses it; deleting a
// refused one forgets it by every key.
func testUploadReap(t *testing.T, s ask.UploadStore) {
	ctx := context.Background()
	cut := at(2 * time.Hour)
	pending := newUpload() // never used, expired first
	pending.ExpiresAt = at(30 * time.Minute)
	createUpload(t, s, pending)
	stored := storedUpload(t, s, at(time.Hour)) // stored, shown by no ask
	used := storedUpload(t, s, at(40*time.Minute))
	if err := s.UseUpload(ctx, used.Space, used.ID); err != nil {
		t.Fatal(err)
	}
	refused := newUpload()
	refused.ExpiresAt = at(50 * time.Minute)
	createUpload(t, s, refused)
	if err := s.RefuseUpload(ctx, refused.Space, refused.ID, "not a PNG"); err != nil {
		t.Fatal(err)
	}
	later := storedUpload(t, s, at(3*time.Hour)) // not expired by the cut-off
	spaces := []string{pending.Space, stored.Space, used.Space, refused.Space, later.Space}

	same(t, "the reapable uploads", []string{pending.ID, refused.ID, stored.ID}, reapable(t, s, cut, spaces...))

	for _, u := range []*ask.Upload{used, later} {
		if ok, err := s.RetireUpload(ctx, u.Space, u.ID, cut, "reaped"); ok || err != nil {
			t.Fatalf("RetireUpload of %s (used, or not expired by the cut-off) = %v, %v", u.ID, ok, err)
		}
	}
	if ok, err := s.RetireUpload(ctx, newSpace(), ask.NewUploadID(), cut, "reaped"); ok || err != nil {
		t.Fatalf("RetireUpload of an unknown upload = %v, %v", ok, err)
	}
	for _, u := range []*ask.Upload{pending, stored, refused} {
		if ok, err := s.RetireUpload(ctx, u.Space, u.ID, cut, "reaped"); !ok || err != nil {
			t.Fatalf("RetireUpload of %s = %v, %v", u.ID, ok, err)
		}
	}
	if got, err := s.UploadByID(ctx, stored.Space, stored.ID); err != nil || got.State != ask.UploadRefused || got.Refusal != "reaped" || got.StoredAt != nil {
		t.Fatalf("the retired stored upload = %+v, %v", got, err)
	}
	if got, err := s.UploadByID(ctx, refused.Space, refused.ID); err != nil || got.Refusal != "not a PNG" {
		t.Fatalf("a refused upload retired keeps its reason: %+v, %v", got, err)
	}
	if err := s.UseUpload(ctx, stored.Space, stored.ID); ask.ErrorCode(err) != ask.EUploadNotFound {
		t.Fatalf("UseUpload of a retired upload = %v", err)
	}
	if _, err := s.StoredUpload(ctx, stored.Space, stored.ID); ask.ErrorCode(err) != ask.EUploadNotFound {
		t.Fatalf("StoredUpload of a retired upload = %v", err)
	}

	for _, u := range []*ask.Upload{pending, stored, refused, used} {
		if err := s.DeleteUpload(ctx, u.Space, u.ID); err != nil {
			t.Fatalf("DeleteUpload %s: %v", u.ID, err)
		}
	}
	for _, u := range []*ask.Upload{pending, stored, refused} {
		key, _ := ask.UploadBlobKey(u.Space, u.ID)
		_, err1 := s.UploadByID(ctx, u.Space, u.ID)
		_, err2 := s.UploadByToken(ctx, u.Space, u.TokenHash)
		_, err3 := s.UploadByBlob(ctx, key)
		for _, err := range []error{err1, err2, err3} {
			if ask.ErrorCode(err) != ask.EUploadNotFound {
				t.Fatalf("after DeleteUpload %s: %v, want %s", u.ID, err, ask.EUploadNotFound)
			}
		}
	}
	if _, err := s.StoredUpload(ctx, used.Space, used.ID); err != nil {
		t.Fatalf("DeleteUpload of a stored upload deleted it: %v", err)
	}
	same(t, "the reapable uploads after", []string(nil), reapable(t, s, cut, spaces...))
	if err := s.DeleteUpload(ctx, pending.Space, pending.ID); err != nil {
		t.Fatalf("DeleteUpload again: %v", err)
	}
	// An upload created used (a migration's) is never listed.
	u := newUpload()
	u.Used, u.ExpiresAt = true, at(time.Minute)
	createUpload(t, s, u)
	if got := reapable(t, s, cut, u.Space); len(got) != 0 {
		t.Fatalf("a used upload is listed: %v", got)
	}
}

func testBlobDelete(t *testing.T, s ask.Blobs) {
	ctx := context.Background()
	k := newKey(t, newSpace())
	putBlob(t, s, k, ask.ImagePNG, randomBytes(1000))
	other := newKey(t, newSpace())
	putBlob(t, s, other, ask.ImagePNG, randomBytes(10))
	for range 2 {
		if err := s.DeleteBlob(ctx, k); err != nil {
			t.Fatalf("DeleteBlob: %v", err)
		}
	}
	wantNoBlob(t, s, k, "a deleted blob")
	if got, _ := readBlob(t, s, other); len(got) != 10 {
		t.Fatalf("another blob after a delete: %d bytes", len(got))
	}
	if err := s.DeleteBlob(ctx, ask.BlobKey{}); err == nil {
		t.Fatal("DeleteBlob of the zero key: no error")
	}
}

// TestBlobs runs the conformance suite for ask.Blobs.
func TestBlobs(t *testing.T, open func(t *testing.T) ask.Blobs) {
	tests := []struct {
		name string
		fn   func(*testing.T, ask.Blobs)
	}{
		{"PutAndOpen", testBlobPutAndOpen},
		{"Missing", testBlobMissing},
		{"SpacesAreApart", testBlobSpaces},
		{"ShortBody", testBlobShort},
		{"LongBody", testBlobLong},
		{"Replace", testBlobReplace},
		{"Empty", testBlobEmpty},
		{"ZeroKey", testBlobZeroKey},
		{"Concurrent", testBlobConcurrent},
		{"Delete", testBlobDelete},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func newKey(t *testing.T, space string) ask.BlobKey {
	t.Helper()
	k, err := ask.UploadBlobKey(space, ask.NewUploadID())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func putBlob(t *testing.T, s ask.Blobs, k ask.BlobKey, ct string, b []byte) {
	t.Helper()
	if err := s.PutBlob(context.Background(), k, ask.BlobInfo{ContentType: ct, Size: int64(len(b))}, bytes.NewReader(b)); err != nil {
		t.Fatalf("PutBlob %s: %v", k, err)
	}
}

// readBlob opens a blob and reads all of it.
func readBlob(t *testing.T, s ask.Blobs, k ask.BlobKey) ([]byte, ask.BlobInfo) {
	t.Helper()
	rc, info, err := s.OpenBlob(context.Background(), k)
	if err != nil {
		t.Fatalf("OpenBlob %s: %v", k, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading blob %s: %v", k, err)
	}
	return b, info
}

func wantNoBlob(t *testing.T, s ask.Blobs, k ask.BlobKey, what string) {
	t.Helper()
	rc, _, err := s.OpenBlob(context.Background(), k)
	if err == nil {
		rc.Close()
		t.Fatalf("%s: OpenBlob found a blob", what)
	}
	if !errors.Is(err, ask.ErrBlobNotFound) {
		t.Fatalf("%s: OpenBlob: %v, want an error wrapping ask.ErrBlobNotFound", what, err)
	}
}

func testBlobPutAndOpen(t *testing.T, s ask.Blobs) {
	k := newKey(t, newSpace())
	want := randomBytes(300 << 10)
	putBlob(t, s, k, ask.ImageJPEG, want)
	got, info := readBlob(t, s, k)
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes back, want the %d put", len(got), len(want))
	}
	same(t, "the blob's info", ask.BlobInfo{ContentType: ask.ImageJPEG, Size: int64(len(want))}, info)
}

func testBlobMissing(t *testing.T, s ask.Blobs) {
	wantNoBlob(t, s, newKey(t, newSpace()), "a key never put")
}

func testBlobSpaces(t *testing.T, s ask.Blobs) {
	id := ask.NewUploadID()
	a, _ := ask.UploadBlobKey(newSpace(), id)
	b, _ := ask.UploadBlobKey(newSpace(), id)
	putBlob(t, s, a, ask.ImagePNG, []byte("space a"))
	wantNoBlob(t, s, b, "the same upload id in another space")
	putBlob(t, s, b, ask.ImageGIF, []byte("space b, longer"))
	if got, info := readBlob(t, s, a); string(got) != "space a" || info.ContentType != ask.ImagePNG {
		t.Fatalf("space a's blob became %q (%+v) after space b's was put", got, info)
	}
}

func testBlobShort(t *testing.T, s ask.Blobs) {
	k := newKey(t, newSpace())
	err := s.PutBlob(context.Background(), k, ask.BlobInfo{ContentType: ask.ImagePNG, Size: 100}, strings.NewReader("only 14 bytes"))
	if err == nil {
		t.Fatal("PutBlob of fewer bytes than info.Size: got no error")
	}
	wantNoBlob(t, s, k, "after a short body")
}

func testBlobLong(t *testing.T, s ask.Blobs) {
	k := newKey(t, newSpace())
	err := s.PutBlob(context.Background(), k, ask.BlobInfo{ContentType: ask.ImagePNG, Size: 4}, strings.NewReader("more than four bytes"))
	if err == nil {
		t.Fatal("PutBlob of more bytes than info.Size: got no error")
	}
	wantNoBlob(t, s, k, "after a long body")
}

func testBlobReplace(t *testing.T, s ask.Blobs) {
	k := newKey(t, newSpace())
	putBlob(t, s, k, ask.ImagePNG, []byte("first"))
	putBlob(t, s, k, ask.ImageWebP, []byte("second, longer"))
	got, info := readBlob(t, s, k)
	if string(got) != "second, longer" || info.ContentType != ask.ImageWebP || info.Size != int64(len(got)) {
		t.Fatalf("after replacing: %q %+v", got, info)
	}
}

func testBlobEmpty(t *testing.T, s ask.Blobs) {
	k := newKey(t, newSpace())
	putBlob(t, s, k, ask.ImageGIF, nil)
	got, info := readBlob(t, s, k)
	if len(got) != 0 || info.Size != 0 || info.ContentType != ask.ImageGIF {
		t.Fatalf("an empty blob came back as %d bytes, %+v", len(got), info)
	}
}

func testBlobZeroKey(t *testing.T, s ask.Blobs) {
	ctx := context.Background()
	if err := s.PutBlob(ctx, ask.BlobKey{}, ask.BlobInfo{ContentType: ask.ImagePNG, Size: 1}, strings.NewReader("x")); err == nil {
		t.Fatal("PutBlob with the zero key: got no error")
	}
	if rc, _, err := s.OpenBlob(ctx, ask.BlobKey{}); err == nil {
		rc.Close()
		t.Fatal("OpenBlob with the zero key: got no error")
	}
}

func testBlobConcurrent(t *testing.T, s ask.Blobs) {
	const n = 8
	space := newSpace()
	keys := make([]ask.BlobKey, n)
	bodies := make([][]byte, n)
	for i := range n {
		keys[i], bodies[i] = newKey(t, space), randomBytes(64<<10+i)
	}
	errs := make([]error, n)
	race(n, func(i int) {
		errs[i] = s.PutBlob(context.Background(), keys[i], ask.BlobInfo{ContentType: ask.ImagePNG, Size: int64(len(bodies[i]))}, bytes.NewReader(bodies[i]))
	})
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("put %d: %v", i, errs[i])
		}
		if got, _ := readBlob(t, s, keys[i]); !bytes.Equal(got, bodies[i]) {
			t.Fatalf("blob %d came back different", i)
		}
	}
}
