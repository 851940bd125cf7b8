package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// TestMigrateUploadReaping: a database of schema 7 gets the reaping columns, and the uploads it
// stored already are taken as used (which asks show them is not known there), so the sweep never
// reaps an image an existing ask shows; a ticket never used is reapable as any other.
func TestMigrateUploadReaping(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "loopback.db")
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	mk := func(store bool) string {
		u := &ask.Upload{ID: ask.NewUploadID(), Space: "s", TokenHash: []byte(ask.NewID()), ContentType: ask.ImagePNG,
			MaxBytes: 10, State: ask.UploadPending, CreatedAt: now, ExpiresAt: now.Add(ask.UploadTTL)}
		if err := d.CreateUpload(ctx, u); err != nil {
			t.Fatal(err)
		}
		if store {
			if _, err := d.ClaimUpload(ctx, "s", u.ID, now); err != nil {
				t.Fatal(err)
			}
			if err := d.MarkUploadStored(ctx, "s", u.ID, 3, now); err != nil {
				t.Fatal(err)
			}
		}
		return u.ID
	}
	stored, unused := mk(true), mk(false)
	if _, err := d.w.ExecContext(ctx, `DROP INDEX asks_closed_by; ALTER TABLE asks DROP COLUMN turns;
		DROP INDEX uploads_reapable; DROP TABLE upload_quota;
		ALTER TABLE uploads DROP COLUMN used; ALTER TABLE uploads DROP COLUMN credential;
		CREATE INDEX uploads_unstored ON uploads (expires_at) WHERE state <> 'stored'; `+undoSince(10)+` PRAGMA user_version = 7`); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openPath(t, path)
	list, err := d.ReapableUploads(ctx, now.Add(48*time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != unused {
		t.Fatalf("reapable after migrating: %v; want only the ticket never used %s", list, unused)
	}
	if u, err := d.StoredUpload(ctx, "s", stored); err != nil || !u.Used {
		t.Fatalf("the stored upload after migrating = %+v, %v; want it used", u, err)
	}
	if err := d.TakeUploadQuota(ctx, "s", "cred", now.Truncate(time.Hour), 1); err != nil {
		t.Fatalf("TakeUploadQuota after migrating: %v", err)
	}
}
