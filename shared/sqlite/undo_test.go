package sqlite

import "strings"

// undoMigration holds, for each migration from 010 on, the statements that take it back out: the
// tests that migrate an older database undo the later migrations with undoSince. A new migration
// adds its line here.
var undoMigration = map[int]string{
	10: `DROP TABLE rules;`,
	11: `DROP INDEX asks_due; ALTER TABLE asks DROP COLUMN due_at; DROP TABLE escalations;`,
	12: `DROP TABLE slack_links; DROP TABLE slack_codes; DROP TABLE slack_messages; DROP TABLE slack_spaces;`,
	13: `DROP TABLE action_uses; DROP TABLE mail_addresses;`,
	14: `DROP TABLE push_quiet_hours;`,
	15: `DROP TABLE oauth_clients; DROP TABLE oauth_requests; DROP TABLE oauth_tokens; ALTER TABLE credentials DROP COLUMN client_id;`,
	16: `DROP TABLE passkey_ceremonies; DROP TABLE passkeys;`,
	17: `DROP TABLE passes;`,
	18: `DROP TABLE sso_logins; DROP TABLE sso_links;`,
	19: `DROP TABLE ask_marks;`,
	20: `DROP TABLE ask_search; DROP INDEX asks_closed_created; DROP INDEX asks_project; ALTER TABLE asks DROP COLUMN project;`,
	23: `DROP TABLE search_pending;`,
}

// undoSince returns the statements that undo every migration from n on, newest first.
func undoSince(n int) string {
	_, nums, err := migrations()
	if err != nil {
		panic(err)
	}
	var b strings.Builder
	for i := len(nums) - 1; i >= 0 && nums[i] >= n; i-- {
		s, ok := undoMigration[nums[i]]
		if !ok {
			panic("undoMigration has no line for a migration")
		}
		b.WriteString(s)
		b.WriteString(" ")
	}
	return b.String()
}
