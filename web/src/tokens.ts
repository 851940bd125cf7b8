// Whether an address carries a sign-in token. Used by the renderer (agent-written links with a token
// are shown as text, markdown.ts) and by the service worker (a request with a token in its address
// is never answered from, or put in, its cache: src/sw/policy.ts). It imports nothing, so the
// service worker's bundle takes only this.

/** ASCII tab and newlines, which a browser's URL parser removes anywhere in an address (`#to&#9;ken`). */
const URL_IGNORED = /[\t\n\r]/g;

/**
 * Whether a link target carries a token: `token` anywhere in its query or fragment, in any case,
 * after removing what a URL parser ignores and percent-decoding as often as it takes (`%74oken`,
 * `%2574oken`). Deliberately broad: agent content has no business linking to any address with a
 * token in it, and a legitimate link that happens to match only loses being a link.
 */
export function carriesToken(href: string): boolean {
  let s = href.replace(URL_IGNORED, '');
  for (let i = 0; i < 8; i++) {
    const d = percentDecode(s);
    if (d === s) break;
    s = d.replace(URL_IGNORED, '');
  }
  const at = s.search(/[?#]/);
  return at >= 0 && /token/i.test(s.slice(at));
}

function percentDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    // A malformed sequence elsewhere must not hide a well-formed one: decode byte by byte.
    return s.replace(/%([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  }
}
