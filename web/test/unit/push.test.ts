import { describe, expect, it } from 'vitest';
import {
  base64UrlToBytes,
  derivePushState,
  isIOS,
  keptKey,
  sameKey,
  usesTabNotifications,
  type PushFacts,
} from '../../src/push';
import {
  actionFor,
  groupData,
  groupedNotification,
  inboxFocused,
  isActionPath,
  isAppPath,
  noticePath,
  notificationFor,
  parseNotice,
  pickWindow,
  routeRequest,
  shouldCache,
} from '../../src/sw/policy';

const ORIGIN = 'https://inbox.example';

describe('the bell', () => {
  const ready: PushFacts = {
    secure: true,
    serviceWorker: true,
    pushManager: true,
    notification: true,
    ios: false,
    standalone: false,
    permission: 'default',
    worker: 'ready',
    server: 'yes',
    subscribed: false,
    knownId: false,
    busy: null,
  };
  const state = (f: Partial<PushFacts>) => derivePushState({ ...ready, ...f });

  it('is off, or on only when the browser holds the subscription whose id is kept', () => {
    expect(state({})).toEqual({ kind: 'off' });
    expect(state({ subscribed: true, knownId: true, permission: 'granted' })).toEqual({ kind: 'on' });
    // A subscription this sign-in did not make (or whose id was lost) is not "on".
    expect(state({ subscribed: true, knownId: false, permission: 'granted' })).toEqual({ kind: 'off' });
  });

  it('says what cannot work here before anything else', () => {
    expect(state({ secure: false, ios: true })).toEqual({ kind: 'unsupported', why: 'insecure' });
    expect(state({ serviceWorker: false })).toEqual({ kind: 'unsupported', why: 'browser' });
    expect(state({ pushManager: false })).toEqual({ kind: 'unsupported', why: 'browser' });
    expect(state({ notification: false })).toEqual({ kind: 'unsupported', why: 'browser' });
    expect(state({ worker: 'failed' })).toEqual({ kind: 'unsupported', why: 'worker' });
    expect(state({ server: 'no', subscribed: true, knownId: true })).toEqual({ kind: 'unsupported', why: 'server' });
  });

  it('sends an iPhone in Safari to the Home Screen first, even without the Push API there', () => {
    expect(state({ ios: true, standalone: false, pushManager: false, notification: false })).toEqual({ kind: 'ios-home-screen' });
    expect(state({ ios: true, standalone: true })).toEqual({ kind: 'off' });
    // From the Home Screen but older than iOS 16.4: no Push API.
    expect(state({ ios: true, standalone: true, pushManager: false })).toEqual({ kind: 'unsupported', why: 'browser' });
  });

  it('is blocked when the permission is denied, and working while it checks or acts', () => {
    expect(state({ permission: 'denied', subscribed: true, knownId: true })).toEqual({ kind: 'denied' });
    expect(state({ subscribed: null })).toEqual({ kind: 'working', doing: 'check' });
    expect(state({ worker: 'pending' })).toEqual({ kind: 'working', doing: 'check' });
    expect(state({ busy: 'check' })).toEqual({ kind: 'working', doing: 'check' });
    expect(state({ busy: 'on' })).toEqual({ kind: 'working', doing: 'on' });
    expect(state({ busy: 'off', subscribed: true, knownId: true })).toEqual({ kind: 'working', doing: 'off' });
    // Turning on asks the permission, so a denial before it is not final while it runs.
    expect(state({ busy: 'on', permission: 'denied' })).toEqual({ kind: 'working', doing: 'on' });
  });

  it('falls back to the page’s own notifications only where Web Push cannot work', () => {
    expect(usesTabNotifications({ kind: 'unsupported', why: 'browser' })).toBe(true);
    expect(usesTabNotifications({ kind: 'unsupported', why: 'server' })).toBe(true);
    expect(usesTabNotifications({ kind: 'unsupported', why: 'worker' })).toBe(true);
    expect(usesTabNotifications({ kind: 'unsupported', why: 'insecure' })).toBe(false);
    for (const kind of ['on', 'off', 'denied', 'ios-home-screen'] as const) expect(usesTabNotifications({ kind })).toBe(false);
  });

  it('knows an iPhone, an iPad, and an iPad that says it is a Mac', () => {
    const iphone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
    const ipad = 'Mozilla/5.0 (iPad; CPU OS 16_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.5 Mobile/15E148 Safari/604.1';
    const mac = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
    const android = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36';
    expect(isIOS(iphone, 'iPhone', 5)).toBe(true);
    expect(isIOS(ipad, 'iPad', 5)).toBe(true);
    expect(isIOS(mac, 'MacIntel', 5)).toBe(true); // iPadOS's desktop-class Safari
    expect(isIOS(mac, 'MacIntel', 0)).toBe(false); // a Mac
    expect(isIOS(android, 'Linux armv8l', 5)).toBe(false);
  });
});

describe('the server’s key', () => {
  // web-push's documented example VAPID public key: an uncompressed P-256 point.
  const key = 'BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U';

  it('is decoded from base64url into the 65 bytes applicationServerKey takes', () => {
    const b = base64UrlToBytes(key);
    expect(b).toBeInstanceOf(Uint8Array);
    expect(b.length).toBe(65);
    expect(b[0]).toBe(0x04);
    // The same bytes as standard base64 decodes.
    const std = atob(key.replace(/-/g, '+').replace(/_/g, '/') + '=');
    expect(Array.from(b)).toEqual(Array.from(std, (c) => c.charCodeAt(0)));
  });

  it('takes padding, and "-" and "_" for "+" and "/"', () => {
    expect(Array.from(base64UrlToBytes('-_8'))).toEqual([0xfb, 0xff]);
    expect(Array.from(base64UrlToBytes('-_8='))).toEqual([0xfb, 0xff]);
    expect(Array.from(base64UrlToBytes('AQID'))).toEqual([1, 2, 3]);
    expect(base64UrlToBytes('').length).toBe(0);
  });

  it('refuses what is not base64url', () => {
    for (const bad of ['a+b/', 'abc!', 'A', 'ab cd', 'AQID===']) expect(() => base64UrlToBytes(bad), bad).toThrow();
  });

  it('is compared with the key a subscription was made with', () => {
    const b = base64UrlToBytes(key);
    expect(sameKey(b.slice().buffer, b)).toBe(true);
    const other = b.slice();
    other[64] ^= 1;
    expect(sameKey(other.buffer, b)).toBe(false);
    expect(sameKey(null, b)).toBe(false);
    expect(sameKey(new ArrayBuffer(3), b)).toBe(false);
  });
});

describe('the subscription id kept on the device', () => {
  it('is kept under a hash of the token, never the token', async () => {
    const a = await keptKey('lb_secret_one');
    expect(a).toMatch(/^loopback\.push\.[0-9a-f]{24}$/);
    expect(a).not.toContain('secret');
    expect(await keptKey('lb_secret_one')).toBe(a);
    expect(await keptKey('lb_secret_two')).not.toBe(a);
  });
});

describe('the service worker’s cache', () => {
  const get = (path: string, extra: { mode?: string; authorization?: boolean } = {}) =>
    routeRequest({ method: 'GET', url: ORIGIN + path, ...extra }, ORIGIN);

  it('answers the inbox’s pages and the shell’s files, nothing else', () => {
    expect(get('/', { mode: 'navigate' })).toBe('navigate');
    expect(get('/history', { mode: 'navigate' })).toBe('navigate');
    expect(get('/asks/abc123', { mode: 'navigate' })).toBe('navigate');
    expect(get('/assets/index-3uRGbLn8.js', { mode: 'cors' })).toBe('shell');
    expect(get('/icons/icon-192.png', { mode: 'no-cors' })).toBe('shell');
    expect(get('/manifest.webmanifest')).toBe('shell');
  });

  it('never touches the API, MCP, the worker itself, other origins or other methods', () => {
    for (const path of ['/api/v1/snapshot', '/api/v1/files/up_1', '/api/v1/events', '/api', '/mcp', '/mcp/x', '/sw.js', '/auth/oidc/start', '/auth/oidc/callback', '/oauth/continue']) {
      expect(get(path), path).toBe('network');
      expect(shouldCache({ method: 'GET', url: ORIGIN + path }, ORIGIN), path).toBe(false);
    }
    expect(routeRequest({ method: 'GET', url: 'https://cdn.example/x.js' }, ORIGIN)).toBe('network');
    expect(routeRequest({ method: 'POST', url: ORIGIN + '/' }, ORIGIN)).toBe('network');
    expect(routeRequest({ method: 'HEAD', url: ORIGIN + '/assets/a.js' }, ORIGIN)).toBe('network');
    expect(routeRequest({ method: 'GET', url: 'not a url' }, ORIGIN)).toBe('network');
  });

  it('never touches a request that carries a token', () => {
    expect(get('/assets/index.js', { authorization: true })).toBe('network');
    for (const path of ['/#token=lb_x', '/asks/a#token=lb_x', '/?token=lb_x', '/#%74oken=lb_x', '/#x=1&TOKEN=2', '/assets/a.js?token=1']) {
      expect(get(path, { mode: 'navigate' }), path).toBe('network');
      expect(shouldCache({ method: 'GET', url: ORIGIN + path }, ORIGIN), path).toBe(false);
    }
  });

  it('leaves pages with a query, or fetched rather than navigated to, to the network', () => {
    expect(get('/?x=1', { mode: 'navigate' })).toBe('network');
    expect(get('/', { mode: 'cors' })).toBe('network');
    expect(get('/assets/a.js?v=2')).toBe('network');
  });

  it('knows the inbox’s pages as web.IsAppRoute does', () => {
    const cases: Record<string, boolean> = {
      '/': true, '/history': true, '/history/': true, '/rules': true, '/rules/': true, '/asks/x': true, '/asks/x/': true, '/rules/x': false,
      '/asks/': false, '/asks/x/y': false, '/api/v1/snapshot': false, '/favicon.svg': false,
    };
    for (const [p, want] of Object.entries(cases)) expect(isAppPath(p), p).toBe(want);
  });
});

describe('a push as a notification', () => {
  const payload = {
    askId: 'ask_7f3',
    title: 'billing-service asks',
    body: 'Should the webhook retry queue use exponential backoff or a fixed delay?',
    tag: 'ask-ask_7f3',
    url: '/asks/ask_7f3',
  };

  it('shows the title and body, replaces its own repeats by tag, and leads to the ask', () => {
    const n = parseNotice(JSON.stringify(payload));
    expect(n).toEqual(payload);
    const { title, options } = notificationFor(n, 1_700_000_000_000);
    expect(title).toBe('billing-service asks');
    expect(options).toEqual({
      body: payload.body,
      tag: 'ask-ask_7f3',
      renotify: true,
      data: { url: '/asks/ask_7f3', askId: 'ask_7f3' },
      icon: '/icons/icon-192.png',
      badge: '/icons/badge-96.png',
      lang: 'en',
      timestamp: 1_700_000_000_000,
    });
  });

  it('cuts a long title or body short', () => {
    const { title, options } = notificationFor(parseNotice(JSON.stringify({ ...payload, title: 't'.repeat(500), body: 'b'.repeat(1000) })));
    expect(Array.from(title).length).toBe(120);
    expect(title.endsWith('…')).toBe(true);
    expect(Array.from(options.body!).length).toBe(300);
  });

  it('still notifies, generically, when the data is not what the server sends', () => {
    for (const text of [null, '', 'not json', '[]', '{"title": 5}']) {
      const n = parseNotice(text);
      expect(n.title, String(text)).toBe('Loopback');
      expect(n.body).toBe('An agent is waiting on you.');
      expect(n.url).toBe('/');
      expect(n.tag).toBe('loopback');
    }
    expect(parseNotice('{"askId": "a1"}')).toMatchObject({ tag: 'ask-a1', url: '/asks/a1' });
  });

  it('leads only to the inbox’s own pages', () => {
    expect(noticePath({ url: '/asks/a1' })).toBe('/asks/a1');
    expect(noticePath({ url: '/history' })).toBe('/history');
    for (const url of ['https://evil.example/asks/a1', '//evil.example/asks/a1', '/\\evil.example', 'javascript:alert(1)', '/asks/a1#token=lb_x', '/?token=x', '/api/v1/snapshot', '/asks/a/b']) {
      expect(noticePath({ url, askId: 'a1' }), url).toBe('/asks/a1');
      expect(noticePath({ url }), url).toBe('/');
    }
    expect(noticePath({ askId: 'a b/c' })).toBe('/');
    expect(noticePath({ askId: 'a b' })).toBe('/asks/a%20b');
    expect(noticePath(null)).toBe('/');
  });
});

describe('the windows a notification goes to', () => {
  const w = (path: string, focused = false, visibilityState = 'hidden') => ({ url: ORIGIN + path, focused, visibilityState });

  it('shows none while an inbox window has the focus', () => {
    expect(inboxFocused([w('/', true)], ORIGIN)).toBe(true);
    expect(inboxFocused([w('/asks/a', false, 'visible'), w('/history', true)], ORIGIN)).toBe(true);
    expect(inboxFocused([w('/', false, 'visible')], ORIGIN)).toBe(false);
    // A focused window of the origin that is not the inbox (an image opened on its own) does not count.
    expect(inboxFocused([w('/api/v1/files/up_1', true)], ORIGIN)).toBe(false);
    expect(inboxFocused([{ url: 'https://other.example/', focused: true }], ORIGIN)).toBe(false);
    expect(inboxFocused([], ORIGIN)).toBe(false);
  });

  it('brings forward the focused inbox window, else a visible one, else the first', () => {
    expect(pickWindow([w('/'), w('/asks/a', true)], ORIGIN)).toBe(1);
    expect(pickWindow([w('/'), w('/history', false, 'visible')], ORIGIN)).toBe(1);
    expect(pickWindow([w('/favicon.svg', true), w('/asks/b')], ORIGIN)).toBe(1);
    expect(pickWindow([w('/favicon.svg', true)], ORIGIN)).toBe(-1);
    expect(pickWindow([], ORIGIN)).toBe(-1);
  });
});

describe('answers from the notification, grouped per project (revision 4)', () => {
  const act = (i: number, title: string) => ({ action: `choice-${i}`, title, url: `/api/v1/actions/la1.tok${i}.sig` });
  const notice = (askId: string, extra: Record<string, unknown> = {}) =>
    parseNotice(
      JSON.stringify({
        askId,
        title: 'billing-service asks',
        body: `Question ${askId}?`,
        tag: `ask-${askId}`,
        url: `/asks/${askId}`,
        project: 'billing-service',
        group: 'project-abc',
        actions: [act(0, 'Backoff'), act(1, 'Fixed')],
        ...extra,
      }),
    );

  it('keeps only action links of this origin, and no more than two', () => {
    expect(isActionPath('/api/v1/actions/la1.abc-_~.x')).toBe(true);
    for (const bad of ['https://evil.example/api/v1/actions/x', '//evil.example/api/v1/actions/x', '/api/v1/actions/x?y=1', '/api/v1/actions/a/b', '/actions/la1.x', '/api/v1/asks/a1/reply', '/api/v1/actions/', 7]) {
      expect(isActionPath(bad), String(bad)).toBe(false);
    }
    const n = notice('a1', { actions: [act(0, 'A'), { action: 'x', title: 'Evil', url: 'https://evil.example/actions/t' }, act(1, 'B'), act(2, 'C')] });
    expect(n.actions?.map((a) => a.title)).toEqual(['A', 'B']);
    // An older server's notice: exactly the revision-2 fields.
    expect(parseNotice('{"askId":"a1","title":"t","body":"b","tag":"ask-a1","url":"/asks/a1"}')).toEqual({ askId: 'a1', title: 't', body: 'b', tag: 'ask-a1', url: '/asks/a1' });
  });

  it('shows a project’s asks as one notification with a count, the newest on top with its buttons', () => {
    const first = groupedNotification(null, notice('a1'), { now: 1, maxActions: 2 })!;
    expect(first.title).toBe('billing-service asks');
    expect(first.options.tag).toBe('project-abc');
    expect(first.options.renotify).toBe(true);
    expect(first.options.actions).toEqual([
      { action: 'choice-0', title: 'Backoff' },
      { action: 'choice-1', title: 'Fixed' },
    ]);
    const second = groupedNotification(groupData(first.options.data), notice('a2', { actions: [act(0, 'Yes')] }), { now: 2, maxActions: 2 })!;
    expect(second.title).toBe('billing-service asks · 2 waiting');
    expect(second.options.body).toBe('Question a2?');
    expect(second.options.actions).toEqual([{ action: 'choice-0', title: 'Yes' }]);
    // The same ask pushed again (its move came back) is counted once.
    const again = groupedNotification(groupData(second.options.data), notice('a1'), { maxActions: 2 })!;
    expect(again.title).toBe('billing-service asks · 2 waiting');
    expect(again.options.body).toBe('Question a1?');
    // A click on a button answers the ask on top, with its own link.
    expect(actionFor(again.options.data, 'choice-1')?.url).toBe('/api/v1/actions/la1.tok1.sig');
    expect(actionFor(again.options.data, 'choice-9')).toBeNull();
  });

  it('shows no buttons where the platform has none (iOS): the tap opens the ask', () => {
    const n = groupedNotification(null, notice('a1'), { maxActions: 0 })!;
    expect(n.options.actions).toBeUndefined();
    expect(n.options.data).toMatchObject({ url: '/asks/a1', askId: 'a1' });
  });

  it('says who answered where when the last ask is answered elsewhere, silently, and leaves the rest', () => {
    const two = groupedNotification(groupData(groupedNotification(null, notice('a1'), { maxActions: 2 })!.options.data), notice('a2'), { maxActions: 2 })!;
    const answered = notice('a2', { title: 'billing-service', body: 'Answered by Ada in Slack', actions: undefined, answered: { by: 'Ada', via: 'slack', at: '2026-12-02T10:42:00Z' } });
    const left = groupedNotification(groupData(two.options.data), answered, { maxActions: 2 })!;
    expect(left.title).toBe('billing-service asks');
    expect(left.options.body).toBe('Question a1?');
    expect(left.options.renotify).toBe(false);
    expect(left.options.silent).toBe(true);
    const last = groupedNotification(groupData(left.options.data), { ...answered, askId: 'a1' }, { timeZone: 'UTC' })!;
    expect(last.options.body).toBe('Answered by Ada in Slack, 10:42');
    expect(last.options.silent).toBe(true);
    expect(last.options.actions).toBeUndefined();
    // Not shown on this device: nothing to change. Closed without an answer, the last: it goes.
    expect(groupedNotification(groupData(left.options.data), { ...answered, askId: 'zz' })).toBeUndefined();
    expect(groupedNotification(null, answered)).toBeUndefined();
    expect(groupedNotification(groupData(left.options.data), notice('a1', { closed: true }))).toBeNull();
  });
});
