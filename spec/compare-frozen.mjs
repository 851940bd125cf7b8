// Compares a frozen file of a shipped revision with what main.tsp emits now, and exits 1 (with the
// difference) unless the shipped one is still there unchanged. check-frozen.sh runs it for every
// file under revisions/*/.
//
//   node compare-frozen.mjs REVISION FROZEN EMITTED
//
// Two things the emitters cannot keep byte for byte when a revision is added, and only those, are
// allowed to differ:
//   - the `Revisions` enum lists every revision in every document (the versioning library
//     projects the enum of versions whole), so a later revision's value may appear in it;
//   - loopback.json, the JSON Schema bundle, is unversioned (the JSON Schema emitter ignores
//     @versioned): it is the newest revision's, so it may hold more definitions than a frozen
//     one, but every definition the frozen bundle has must be there, unchanged, except that a
//     union (`anyOf`) or an enum (`enum`) may have gained variants after its frozen ones, in order:
//     a later revision's `@added` variants, as in revision 3's `approval` kind and replies; and
//     an object may have gained optional properties (never required ones): a later revision's
//     `@added` fields, as revision 4's `via` on a person's entry. Each revision's OpenAPI
//     document, which is versioned, still holds every model exactly as that revision shipped it.
// Everything else, a revision's OpenAPI document above all, must be emitted exactly as it shipped.
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";

const [revision, frozenPath, emittedPath] = process.argv.slice(2);
const rev = Number(revision);
const frozen = JSON.parse(readFileSync(frozenPath, "utf8"));
const emitted = JSON.parse(readFileSync(emittedPath, "utf8"));

/** The revisions enum as revision `rev` shipped it: only values up to `rev`. */
function asOfRevision(schema) {
  if (!schema || !Array.isArray(schema.enum)) return schema;
  return { ...schema, enum: schema.enum.filter((v) => Number(v) <= rev) };
}

/**
 * The emitted definition with any variants a later revision appended to its union or enum cut off,
 * when the frozen ones are still its first ones, in order; otherwise the emitted definition as it is.
 */
function withoutLaterVariants(frozenDef, now) {
  if (!frozenDef || !now) return now;
  let out = now;
  for (const key of ["anyOf", "enum"]) {
    const was = frozenDef[key];
    const is = out[key];
    if (!Array.isArray(was) || !Array.isArray(is) || is.length <= was.length) continue;
    if (!isDeepStrictEqual(was, is.slice(0, was.length))) continue;
    out = { ...out, [key]: is.slice(0, was.length) };
  }
  const props = out.properties;
  if (frozenDef.properties && props && isDeepStrictEqual(frozenDef.required, out.required)) {
    const later = Object.keys(props).filter((k) => !(k in frozenDef.properties) && !(out.required ?? []).includes(k));
    if (later.length > 0) {
      const kept = Object.fromEntries(Object.entries(props).filter(([k]) => !later.includes(k)));
      out = { ...out, properties: kept };
    }
  }
  return out;
}

function fail(what, a, b) {
  console.error(`${what} differs:\n  shipped: ${JSON.stringify(a)}\n  emitted: ${JSON.stringify(b)}`.slice(0, 4000));
  process.exit(1);
}

if (emitted.openapi !== undefined) {
  const e = structuredClone(emitted);
  const schemas = e.components?.schemas ?? {};
  if (schemas.Revisions) schemas.Revisions = asOfRevision(schemas.Revisions);
  if (!isDeepStrictEqual(frozen, e)) {
    for (const key of new Set([...Object.keys(frozen), ...Object.keys(e)])) {
      if (!isDeepStrictEqual(frozen[key], e[key])) fail(`the OpenAPI document's ${key}`, frozen[key], e[key]);
    }
  }
} else {
  const defs = emitted.$defs ?? {};
  for (const [name, def] of Object.entries(frozen.$defs ?? {})) {
    const now = withoutLaterVariants(def, name === "Revisions" ? asOfRevision(defs[name]) : defs[name]);
    if (now === undefined) fail(`$defs.${name}`, def, "(no longer emitted)");
    if (!isDeepStrictEqual(def, now)) fail(`$defs.${name}`, def, now);
  }
  const { $defs: _f, ...frozenTop } = frozen;
  const { $defs: _e, ...emittedTop } = emitted;
  if (!isDeepStrictEqual(frozenTop, emittedTop)) fail("the bundle's top level", frozenTop, emittedTop);
}
