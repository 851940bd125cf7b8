-- Reserved for passkeys (issue 28; branch passkey). This placeholder only keeps the migrations in
-- sequence for 017 until that branch lands: its own 016 replaces this file.
SELECT 1;
