// Copies what `tsp compile .` emitted into generated/ to where the Go module embeds it,
// shared/contract/schema/, so the embedded copy is always exactly the emitted output.
//
//   node sync-schema.mjs [outputDir] [targetDir]   copy outputDir's emitted files into targetDir
//   node sync-schema.mjs --freeze N                freeze generated/ as revisions/N/ (refuses to overwrite)
//
// The OpenAPI document (openapi.<revision>.json) and the JSON Schema bundle (loopback.json) land
// side by side, flat, under the names the emitters gave them.
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const emitters = ["openapi3", "json-schema"];

function emitted(outputDir) {
  const files = [];
  for (const emitter of emitters) {
    const dir = join(outputDir, emitter);
    if (!existsSync(dir)) throw new Error(`nothing emitted in ${dir}: run \`tsp compile .\` first`);
    for (const name of readdirSync(dir).sort()) {
      if (name.endsWith(".json")) files.push({ name, path: join(dir, name) });
    }
  }
  const seen = new Set();
  for (const f of files) {
    if (seen.has(f.name)) throw new Error(`two emitters wrote ${f.name}`);
    seen.add(f.name);
  }
  return files;
}

function copyInto(outputDir, targetDir, { clean }) {
  const files = emitted(outputDir);
  mkdirSync(targetDir, { recursive: true });
  if (clean) {
    for (const name of readdirSync(targetDir)) {
      if (name.endsWith(".json")) rmSync(join(targetDir, name));
    }
  }
  for (const f of files) copyFileSync(f.path, join(targetDir, f.name));
  console.log(`${files.map((f) => f.name).join(", ")} -> ${targetDir}`);
}

const args = process.argv.slice(2);
if (args[0] === "--freeze") {
  const n = args[1];
  if (!/^[1-9][0-9]*$/.test(n ?? "")) throw new Error("usage: node sync-schema.mjs --freeze N");
  const target = join(here, "revisions", n);
  if (existsSync(target)) throw new Error(`${target} exists: a shipped revision is never edited`);
  copyInto(join(here, "generated"), target, { clean: false });
} else {
  const outputDir = resolve(args[0] ?? join(here, "generated"));
  const targetDir = resolve(args[1] ?? join(here, "..", "shared", "contract", "schema"));
  copyInto(outputDir, targetDir, { clean: true });
}
