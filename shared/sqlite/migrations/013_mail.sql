-- Reserved for the mail work of issue 27 (migrations are numbered without gaps); that
-- branch's 013 replaces this file when both are merged.
SELECT 1;
