// Signing in. `loopback serve` prints the inbox's address with the token in the URL fragment
// (`/#token=lb_…`): a browser never sends the fragment to a server, so it appears in no request and
// no access log. The page takes it from there, keeps it in localStorage, and takes it out of the
// address bar (and so out of the history and of any copied link) at once. The token is never logged.

const KEY = 'loopback.token';

/** Reads a token from the fragment, removing it from the address bar; null when there is none. */
export function takeTokenFromFragment(loc: Location = location, hist: History = history): string | null {
  const hash = loc.hash.replace(/^#/, '');
  if (!hash) return null;
  const params = new URLSearchParams(hash);
  const token = params.get('token');
  if (token === null) return null;
  params.delete('token');
  const rest = params.toString();
  hist.replaceState(hist.state, '', loc.pathname + loc.search + (rest ? '#' + rest : ''));
  return token.trim() || null;
}

export function storedToken(): string | null {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string): void {
  try {
    localStorage.setItem(KEY, token);
  } catch {
    // private mode without storage: the token lasts for this page only
  }
}

export function forgetToken(): void {
  try {
    localStorage.removeItem(KEY);
  } catch {
    // nothing kept
  }
}
