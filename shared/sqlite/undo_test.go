package sqlite

// undoSlack takes a database back to before migration 012 (Slack), for the tests that migrate an
// older database.
const undoSlack = `DROP TABLE slack_links; DROP TABLE slack_codes; DROP TABLE slack_messages; DROP TABLE slack_spaces;`
