package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/loopback-hq/loopback/shared/app"
	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/blobfs"
	"github.com/loopback-hq/loopback/shared/blobs3"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/sqlite"
)

// storage is every store port serve uses, on one backend, and its Close.
type storage interface {
	app.Storage
	Close() error
}

// oauthStore is where MCP OAuth keeps its state: both stores keep it (SQLite's tables, the
// DynamoDB table's items with a TTL).
func oauthStore(db storage) ask.OAuthStore {
	if st, ok := db.(ask.OAuthStore); ok {
		return st
	}
	return nil
}

// dynamoStorage is the DynamoDB store as a storage: nothing to close, the SDK's client holds no
// connection of its own.
type dynamoStorage struct{ *dynamo.Store }

func (dynamoStorage) Close() error { return nil }

// storageConfig says where serve keeps things: SQLite and files in the data folder (the
// default), or a DynamoDB table and, optionally, an S3 bucket, as a deployment does.
type storageConfig struct {
	kind   string // "sqlite" or "dynamodb"
	dir    string // the data folder: the owner's token always; the database and images for sqlite
	table  string
	bucket string // "" keeps images in the data folder
	create bool   // create the table and bucket when missing
}

// backend is an opened storage.
type backend struct {
	store storage
	blobs ask.Blobs
	// cleanup deletes what expired, where the backend does not do it by itself (DynamoDB's time
	// to live does); nil when there is nothing to do.
	cleanup func(ctx context.Context, now time.Time) error
	where   string // for the log
	dbPath  string // the SQLite database's file; "" for DynamoDB
}

func openStorage(ctx context.Context, c storageConfig) (*backend, error) {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the data folder: %w", err)
	}
	if err := tightenDataDir(c.dir); err != nil {
		return nil, err
	}
	switch c.kind {
	case "sqlite", "":
		return openSQLite(ctx, c)
	case "dynamodb":
		return openAWS(ctx, c)
	}
	return nil, fmt.Errorf("--store %q: want sqlite or dynamodb", c.kind)
}

func openSQLite(ctx context.Context, c storageConfig) (*backend, error) {
	db, err := sqlite.Open(ctx, filepath.Join(c.dir, "loopback.db"))
	if err != nil {
		return nil, err
	}
	// Uploaded images: the tickets in the database, the bytes in DIR/blobs.
	blobs, err := blobfs.New(filepath.Join(c.dir, "blobs"))
	if err != nil {
		db.Close()
		return nil, err
	}
	cleanup := func(ctx context.Context, now time.Time) error {
		_, err := db.DeleteExpiredTickets(ctx, now)
		if err == nil {
			_, err = db.DeleteExpiredTasks(ctx, now)
		}
		if err == nil {
			_, err = db.DeleteExpiredActions(ctx, now)
		}
		return err
	}
	return &backend{store: db, blobs: blobs, cleanup: cleanup, where: c.dir, dbPath: filepath.Join(c.dir, "loopback.db")}, nil
}

// openAWS opens the DynamoDB table (and the S3 bucket) with the standard AWS configuration:
// AWS_REGION, credentials from the environment or ~/.aws, and AWS_ENDPOINT_URL for an emulator
// such as moto.
func openAWS(ctx context.Context, c storageConfig) (*backend, error) {
	if c.table == "" {
		return nil, errors.New("--store dynamodb needs --table NAME (or LOOPBACK_TABLE)")
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("--store dynamodb needs a region: set AWS_REGION (such as us-east-1)")
	}
	db := dynamodb.NewFromConfig(cfg)
	if c.create {
		if err := dynamo.EnsureTable(ctx, db, c.table); err != nil {
			return nil, err
		}
	}
	b := &backend{store: dynamoStorage{dynamo.New(db, c.table)}, where: "dynamodb:" + c.table}
	if c.bucket == "" {
		// Images stay in the data folder.
		if b.blobs, err = blobfs.New(filepath.Join(c.dir, "blobs")); err != nil {
			return nil, err
		}
		return b, nil
	}
	client := blobs3.NewClient(cfg)
	if c.create {
		if err := blobs3.EnsureBucket(ctx, client, c.bucket); err != nil {
			return nil, err
		}
	}
	b.blobs = blobs3.New(client, c.bucket)
	b.where += " s3:" + c.bucket
	return b, nil
}
