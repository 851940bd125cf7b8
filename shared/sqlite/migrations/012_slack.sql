-- Reserved for the Slack work of issue 27 (migrations are numbered without gaps); that
-- branch's 012 replaces this file when both are merged.
SELECT 1;
