-- Reserved for the deadline work of issue 27 (migrations are numbered without gaps); that
-- branch's 011 replaces this file when both are merged.
SELECT 1;
