// Package templatecheck holds only a test (its reader is shared/samtemplate): that template.yaml, the Makefile's LAMBDA_DIRS,
// functions/ and shared/httpapi's route table agree (every route has its function, every
// function its build target and main package, and every function's policy what its routes need).
// A route left out of the template would otherwise fall through, unnoticed, to the read-only
// $default function.
package templatecheck
