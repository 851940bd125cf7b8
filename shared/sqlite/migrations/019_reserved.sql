-- Reserved: migration 019 belongs to another branch of revision 6 (see docs/design/search.md).
-- The merge replaces this file with that branch's own.
SELECT 1;
