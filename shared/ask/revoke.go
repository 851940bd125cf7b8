package ask

import (
	"context"
)

// Revoking a credential ends everything it opened. The credential opens nothing from the next
// request on (the gate reads it every time); tickets it was issued are worth nothing (the gate
// checks their credential when one is used); what running processes hold for it (event sockets,
// waiting MCP calls) ends as they see it revoked (gate.Revocations, within a second or two; on
// AWS the stream fan-out disconnects its sockets through @connections). What is left is the
// credential's MCP tasks, which no process holds between polls: Revoke ends those here.

// RevokedTaskMessage is why a task of a revoked credential ended.
const RevokedTaskMessage = "the credential that started this task was revoked; the ask stays open for the person"

// Revoke revokes credential id of a space at now and fails its working tasks (tasks may be nil
// where none are kept), releasing their hold on their asks. An unknown id is an *Error with
// ENotFound; revoking a revoked credential again ends whatever of its tasks is still working.
func (s *Service) Revoke(ctx context.Context, creds CredentialStore, tasks TaskStore, space, id string) error {
	now := s.Now()
	if err := creds.RevokeCredential(ctx, space, id, now); err != nil {
		return err
	}
	if tasks == nil {
		return nil
	}
	var working []*Task
	for cursor := ""; ; {
		page, next, err := tasks.ListTasks(ctx, space, cursor, 100, now)
		if err != nil {
			return err
		}
		for _, t := range page {
			if t.CredentialID == id && !t.Terminal() {
				working = append(working, t)
			}
		}
		if next == "" {
			break
		}
		cursor = next
	}
	for _, t := range working {
		done := *t
		done.Status, done.Message, done.UpdatedAt = TaskFailed, RevokedTaskMessage, now
		if _, err := tasks.FinishTask(ctx, &done); err != nil {
			return err
		}
		if s.Leases != nil {
			if err := s.Unfollow(ctx, space, t.AskID, t.ID); err != nil {
				return err
			}
		}
	}
	return nil
}
