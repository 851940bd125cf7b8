package ask_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

// imageService is a Service on a real SQLite store that keeps uploads, with one stored upload in
// space s1 and one in s2, and one ticket in s1 that was never used.
func imageService(t *testing.T) (svc *ask.Service, mine, theirs, pending string) {
	t.Helper()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	now := ask.Truncate(time.Now())
	mk := func(space string, store bool) string {
		u := &ask.Upload{ID: ask.NewUploadID(), Space: space, TokenHash: []byte(ask.NewID()), ContentType: ask.ImagePNG,
			MaxBytes: ask.MaxUploadBytes, State: ask.UploadPending, CreatedAt: now, ExpiresAt: now.Add(ask.UploadTTL)}
		if err := db.CreateUpload(ctx, u); err != nil {
			t.Fatal(err)
		}
		if store {
			if _, err := db.ClaimUpload(ctx, space, u.ID, now); err != nil {
				t.Fatal(err)
			}
			if err := db.MarkUploadStored(ctx, space, u.ID, 10, now); err != nil {
				t.Fatal(err)
			}
		}
		return u.ID
	}
	svc = &ask.Service{Store: db, Uploads: db, Now: func() time.Time { return ask.Truncate(time.Now()) }, NewID: ask.NewID}
	return svc, mk("s1", true), mk("s2", true), mk("s1", false)
}

func image(id string) ask.Block {
	return ask.Block{Type: ask.BlockImage, UploadID: id, Caption: "screenshot"}
}

func TestImageBlocksInReviews(t *testing.T) {
	svc, mine, theirs, pending := imageService(t)
	ctx := context.Background()
	o := ask.Origin{Space: "s1"}
	review := func(blocks ...ask.Block) ask.ReviewInput {
		in := reviewInput()
		in.Content = append(in.Content, blocks...)
		return in
	}
	if _, err := svc.RequestReview(ctx, review(image(mine), image(mine)), o); err != nil {
		t.Fatalf("a review showing a stored upload of its space: %v", err)
	}
	for name, tc := range map[string]struct {
		blocks []ask.Block
		path   string
		id     string
	}{
		"another space's upload": {[]ask.Block{image(mine), image(theirs)}, "content[2].uploadId", theirs},
		"a ticket never used":    {[]ask.Block{image(pending)}, "content[1].uploadId", pending},
		"an unknown id":          {[]ask.Block{image(ask.NewUploadID())}, "content[1].uploadId", "up_"},
		"not an upload id":       {[]ask.Block{image("../../etc/passwd")}, "content[1].uploadId", "../../etc/passwd"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := svc.RequestReview(ctx, review(tc.blocks...), o)
			wantError(t, err, ask.EInputInvalid, tc.path, tc.id, "no stored upload")
		})
	}
	snap, err := svc.Snapshot(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Open) != 1 {
		t.Fatalf("refused reviews were stored: %d open asks", len(snap.Open))
	}
}

func TestImageBlocksInBriefings(t *testing.T) {
	svc, mine, theirs, _ := imageService(t)
	ctx := context.Background()
	o := ask.Origin{Space: "s1"}
	in := briefingInput(1, 2)
	in.Sections[1].Points[1].Content = []ask.Block{image(mine), {Type: ask.BlockMarkdown, Text: "x"}, image(theirs)}
	_, err := svc.SendBriefing(ctx, in, o)
	wantError(t, err, ask.EInputInvalid, "sections[1].points[1].content[2].uploadId", theirs)

	in.Sections[1].Points[1].Content = []ask.Block{image(mine)}
	b, err := svc.SendBriefing(ctx, in, o)
	if err != nil {
		t.Fatalf("a briefing showing a stored upload: %v", err)
	}
	if _, err := svc.Reply(ctx, "s1", b.ID, responded(say("1", "why?"), resolve("2"), resolve("3")), alice); err != nil {
		t.Fatal(err)
	}
	bad := ask.BriefingAnswerInput{AskID: b.ID, Answers: []ask.PointAnswer{answer("1", "because", "sub a", "sub b")}}
	bad.Answers[0].Points[1].Content = []ask.Block{image(theirs)}
	_, err = svc.AnswerBriefing(ctx, bad, ask.Origin{Space: "s1"})
	wantError(t, err, ask.EAnswerInvalid, "answers[0].points[1].content[0].uploadId", theirs)
	bad.Answers[0].Points[1].Content = nil
	bad.Answers[0].Content = []ask.Block{image(theirs)}
	_, err = svc.AnswerBriefing(ctx, bad, ask.Origin{Space: "s1"})
	wantError(t, err, ask.EAnswerInvalid, "answers[0].content[0].uploadId", theirs)
	bad.Answers[0].Content = []ask.Block{image(mine)}
	if _, err := svc.AnswerBriefing(ctx, bad, ask.Origin{Space: "s1"}); err != nil {
		t.Fatalf("answers showing a stored upload: %v", err)
	}
}

func TestImageBlocksInFollowUps(t *testing.T) {
	svc, mine, theirs, _ := imageService(t)
	ctx := context.Background()
	r, err := svc.RequestReview(ctx, reviewInput(), ask.Origin{Space: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Reply(ctx, "s1", r.ID, followUp("show me?"), alice); err != nil {
		t.Fatal(err)
	}
	_, err = svc.AnswerFollowUp(ctx, ask.FollowUpInput{AskID: r.ID, Answer: "here", Content: []ask.Block{image(theirs)}}, ask.Origin{Space: "s1"})
	wantError(t, err, ask.EAnswerInvalid, "content[0].uploadId", theirs)
	if _, err := svc.AnswerFollowUp(ctx, ask.FollowUpInput{AskID: r.ID, Answer: "here", Content: []ask.Block{image(mine)}}, ask.Origin{Space: "s1"}); err != nil {
		t.Fatalf("an answer showing a stored upload: %v", err)
	}
}

// TestImageBlocksWithoutUploads: a Service that keeps no uploads refuses every image block.
func TestImageBlocksWithoutUploads(t *testing.T) {
	svc, mine, _, _ := imageService(t)
	svc.Uploads = nil
	in := reviewInput()
	in.Content = append(in.Content, image(mine))
	_, err := svc.RequestReview(context.Background(), in, ask.Origin{Space: "s1"})
	wantError(t, err, ask.EInputInvalid, "content[1].uploadId", "no image blocks")
}

func TestUploadIDs(t *testing.T) {
	for _, id := range []string{ask.NewUploadID(), "up_abcdefghijklmnopqrstuvwxyz", "up_22222222222222222222222222"} {
		if !ask.ValidUploadID(id) {
			t.Errorf("ValidUploadID(%q) = false", id)
		}
	}
	for _, id := range []string{"", "up_", "up_abc", "up_abcdefghijklmnopqrstuvwxy1", "UP_abcdefghijklmnopqrstuvwxyz",
		"up_abcdefghijklmnopqrstuvwxyZ", "up_abcdefghijklmnopqrstuvwxy/", "up_abcdefghijklmnopqrstuvwxyzz", "xx_abcdefghijklmnopqrstuvwxyz",
		"up_../../../../../../etc/pass"} {
		if ask.ValidUploadID(id) {
			t.Errorf("ValidUploadID(%q) = true", id)
		}
	}
	a, _ := ask.UploadBlobKey("local", "up_abcdefghijklmnopqrstuvwxyz")
	b, _ := ask.UploadBlobKey("other", "up_abcdefghijklmnopqrstuvwxyz")
	if a.Dir() == b.Dir() || len(a.Dir()) != 32 || a.Name() != "up_abcdefghijklmnopqrstuvwxyz" || a.String() != a.Dir()+"/"+a.Name() {
		t.Errorf("keys %s and %s", a, b)
	}
	if _, err := ask.UploadBlobKey("", "up_abcdefghijklmnopqrstuvwxyz"); err == nil {
		t.Error("a key without a space")
	}
}

// TestImageBlocksMarkUploadsUsed: an ask naming a stored upload marks it used, so the sweep never
// reaps it; an upload the sweep retired a moment before is refused with the reason, not shown.
func TestImageBlocksMarkUploadsUsed(t *testing.T) {
	svc, mine, _, _ := imageService(t)
	ctx := context.Background()
	o := ask.Origin{Space: "s1"}
	in := reviewInput()
	in.Content = append(in.Content, image(mine))
	if _, err := svc.RequestReview(ctx, in, o); err != nil {
		t.Fatal(err)
	}
	u, err := svc.Uploads.UploadByID(ctx, "s1", mine)
	if err != nil || !u.Used {
		t.Fatalf("the upload a review shows = %+v, %v; want it used", u, err)
	}
	if ok, err := svc.Uploads.RetireUpload(ctx, "s1", mine, time.Now().Add(time.Hour), "reaped"); ok || err != nil {
		t.Fatalf("RetireUpload of a used upload = %v, %v", ok, err)
	}

	svc2, other, _, _ := imageService(t) // another store: an upload stored, never named
	if ok, err := svc2.Uploads.RetireUpload(ctx, "s1", other, time.Now().Add(time.Hour), "reaped"); !ok || err != nil {
		t.Fatalf("RetireUpload = %v, %v", ok, err)
	}
	in = reviewInput()
	in.Content = append(in.Content, image(other))
	_, err = svc2.RequestReview(ctx, in, o)
	if ask.ErrorCode(err) != ask.EInputInvalid || !strings.Contains(ask.ErrorMessage(err), "reaped") {
		t.Fatalf("a review naming a retired upload = %v", err)
	}
}
