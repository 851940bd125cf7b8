package sqlite

// undoAfterRules takes a database back to before the migrations after 010 (rules), for the tests
// that migrate an older database: 011's deadlines and escalations, 012's Slack.
const undoAfterRules = `DROP INDEX asks_due; ALTER TABLE asks DROP COLUMN due_at; DROP TABLE escalations;
	DROP TABLE slack_links; DROP TABLE slack_codes; DROP TABLE slack_messages; DROP TABLE slack_spaces;`
