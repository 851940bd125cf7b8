// Pairing a phone and inviting a teammate (contract revision 6): what the page keeps of them.
//
// A laptop signed in shows a QR code of `<inbox>/pair#code=XXXX-XXXX` and the same code to type;
// the phone (Safari after a camera scan, or the home-screen app, whose storage is its own, by the
// typed code) redeems it on its signed-out page and gets a NEW person credential of its own. An
// invite link is `<inbox>/join#invite=lb_iv_…`. Both codes travel in the fragment, which a browser
// never sends to a server, and leave the address bar as the page loads, as the sign-in link's
// token does (auth.ts); they are redeemed only by the person pressing the button, and the token
// that comes back is checked and kept exactly as the sign-in link's (effects/session.ts signIn).

import { useEffect, useState } from 'preact/hooks';

/** What the fragment brought when the page loaded, taken out of the address bar. */
export interface SignInCodes {
  pairing: string | null;
  invite: string | null;
}

let taken: SignInCodes = { pairing: null, invite: null };

/** Reads `#code=` and `#invite=` from the fragment as the page loads, and clears them (and /pair, /join) from the address bar. */
export function takeSignInCodes(loc: Location = location, hist: History = history): SignInCodes {
  const params = new URLSearchParams(loc.hash.replace(/^#/, ''));
  const pairing = loc.pathname.replace(/\/$/, '') === '/pair' ? params.get('code') : null;
  const invite = loc.pathname.replace(/\/$/, '') === '/join' ? params.get('invite') : null;
  if (pairing !== null || invite !== null || /^\/(pair|join)\/?$/.test(loc.pathname)) {
    params.delete('code');
    params.delete('invite');
    const rest = params.toString();
    hist.replaceState(hist.state, '', '/' + (rest ? '#' + rest : ''));
  }
  taken = { pairing: pairing?.trim() || null, invite: invite?.trim() || null };
  return taken;
}

/** The codes the page was opened with (takeSignInCodes), for the signed-out page. */
export function signInCodes(): SignInCodes {
  return taken;
}

/** Forgets a code once it was used (or refused), so a reload does not offer it again. */
export function forgetSignInCode(kind: keyof SignInCodes): void {
  taken = { ...taken, [kind]: null };
}

/**
 * Where another device reaches this Loopback: the public URL `loopback serve --public-url` was
 * given (named in the page's <meta name="loopback-public-url">, web/embed.go), else this page's
 * own origin (on AWS the inbox is on the deployment's CloudFront: its origin is the right one).
 * A phone given 127.0.0.1 could not open the link.
 */
export function publicOrigin(doc: Document = document, own: string = location.origin): string {
  const named = doc.querySelector<HTMLMetaElement>('meta[name="loopback-public-url"]')?.content.trim() ?? '';
  try {
    const u = new URL(named);
    if ((u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password) return u.origin;
  } catch {
    // none named, or not a URL: this page's own origin
  }
  return own;
}

/** The link a pairing code's QR code holds. */
export function pairingLink(code: string, origin: string = publicOrigin()): string {
  return `${origin}/pair#code=${encodeURIComponent(code)}`;
}

/** The link an invite's code makes. */
export function inviteLink(code: string, origin: string = publicOrigin()): string {
  return `${origin}/join#invite=${encodeURIComponent(code)}`;
}

/** What this device calls itself when it redeems a code, for the laptop's "Paired: …". */
export function deviceName(ua: string = navigator.userAgent): string {
  const device = /iPhone/.test(ua)
    ? 'iPhone'
    : /iPad/.test(ua)
      ? 'iPad'
      : /Android/.test(ua)
        ? 'Android phone'
        : /Macintosh/.test(ua)
          ? 'Mac'
          : /Windows/.test(ua)
            ? 'Windows PC'
            : /Linux/.test(ua)
              ? 'Linux'
              : 'a device';
  const browser = /EdgA?\//.test(ua)
    ? 'Edge'
    : /Firefox\/|FxiOS/.test(ua)
      ? 'Firefox'
      : /Chrome\/|CriOS/.test(ua)
        ? 'Chrome'
        : /Safari\//.test(ua)
          ? 'Safari'
          : '';
  const standalone = typeof matchMedia === 'function' && matchMedia('(display-mode: standalone)').matches;
  return [device, standalone ? 'home-screen app' : browser].filter(Boolean).join(', ');
}

// ------------------------------------------------------------------- the "Pair a phone" dialog --

let pairOpen = false;
const listeners = new Set<(open: boolean) => void>();

/** Opens or closes the laptop's "Pair a phone" dialog (from the account menu or Settings). */
export function setPairDialog(open: boolean): void {
  pairOpen = open;
  for (const l of listeners) l(open);
}

export function usePairDialog(): boolean {
  const [open, setOpen] = useState(pairOpen);
  useEffect(() => {
    listeners.add(setOpen);
    return () => void listeners.delete(setOpen);
  }, []);
  return open;
}
