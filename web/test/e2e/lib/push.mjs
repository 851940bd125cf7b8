// Web Push for the browser tests: a browser's push keys, a push service on this machine that
// decrypts what the server pushes as the browser would, and a stand-in for the browser's
// PushManager (headless Chromium has no push service to subscribe with).

import { createDecipheriv, createECDH, hkdfSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

/** A browser's push keys as PushSubscription.toJSON() gives them: a P-256 point and a 16-byte secret. */
export function browserKeys() {
  const ecdh = createECDH('prime256v1');
  return { p256dh: ecdh.generateKeys().toString('base64url'), auth: randomBytes(16).toString('base64url'), ecdh };
}

/**
 * A push service on this machine, standing in for FCM or Apple's: it takes the server's pushes
 * (RFC 8030) and decrypts them as the browser would (RFC 8291, aes128gcm), with the keys of the
 * subscription the page made. `next()` resolves with the next push's plaintext.
 */
export async function pushService(keys) {
  const waiting = [];
  const received = [];
  const http = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        const text = decryptPush(Buffer.concat(chunks), keys);
        received.push({ text, headers: req.headers });
        waiting.shift()?.();
        res.writeHead(201).end();
      } catch (err) {
        res.writeHead(400).end(String(err));
      }
    });
  });
  await new Promise((r) => http.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${http.address().port}/wp/`,
    received,
    async next(timeoutMs = 10_000) {
      if (!received.length) {
        await new Promise((resolve, reject) => {
          const t = setTimeout(() => reject(new Error('no push reached the push service')), timeoutMs);
          waiting.push(() => (clearTimeout(t), resolve()));
        });
      }
      return received.shift();
    },
    close: () => {
      http.closeAllConnections(); // the server's client keeps its connection open
      return new Promise((r) => http.close(r));
    },
  };
}

/** RFC 8291 over RFC 8188: one aes128gcm record, as a browser decrypts a push. */
export function decryptPush(body, { ecdh, auth }) {
  const salt = body.subarray(0, 16);
  const idlen = body[20];
  const serverKey = body.subarray(21, 21 + idlen);
  const record = body.subarray(21 + idlen);
  const uaPublic = ecdh.getPublicKey();
  const secret = ecdh.computeSecret(serverKey);
  const info = (s) => Buffer.from(s + '\0', 'latin1');
  const ikm = Buffer.from(hkdfSync('sha256', secret, Buffer.from(auth, 'base64url'), Buffer.concat([info('WebPush: info'), uaPublic, serverKey]), 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, info('Content-Encoding: aes128gcm'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, info('Content-Encoding: nonce'), 12));
  const d = createDecipheriv('aes-128-gcm', cek, nonce);
  d.setAuthTag(record.subarray(record.length - 16));
  const padded = Buffer.concat([d.update(record.subarray(0, record.length - 16)), d.final()]);
  const end = padded.lastIndexOf(2); // the last record's delimiter, then zero padding
  if (end < 0 || padded.subarray(end + 1).some((b) => b !== 0)) throw new Error('bad padding');
  return padded.subarray(0, end).toString('utf8');
}

/**
 * Stands in for the browser's PushManager, which in headless Chromium has no push service to
 * subscribe with: subscribe() makes a subscription with an endpoint and real keys (kept in
 * localStorage, so that it outlives a reload as a real one does), getSubscription() returns it,
 * unsubscribe() drops it. window.__push records the calls.
 */
export async function fakePushManager(context, keys = browserKeys(), endpoint = 'https://push.example.test/wp/') {
  await context.addInitScript(({ keys, endpoint }) => {
    if (typeof PushManager === 'undefined') return;
    const KEY = '__fakePushSubscription';
    const load = () => JSON.parse(localStorage.getItem(KEY) ?? 'null');
    const record = () => JSON.parse(localStorage.getItem('__fakePushCalls') ?? '{"subscribe":0,"unsubscribe":0}');
    const count = (what) => {
      const r = record();
      r[what]++;
      localStorage.setItem('__fakePushCalls', JSON.stringify(r));
    };
    const make = (s) =>
      s && {
        endpoint: s.endpoint,
        expirationTime: null,
        options: { userVisibleOnly: true, applicationServerKey: new Uint8Array(s.key).buffer },
        getKey: () => null,
        toJSON: () => ({ endpoint: s.endpoint, expirationTime: null, keys: window.__pushKeys ?? keys }),
        unsubscribe: async () => {
          count('unsubscribe');
          localStorage.removeItem(KEY);
          return true;
        },
      };
    PushManager.prototype.getSubscription = async () => make(load());
    PushManager.prototype.subscribe = async (options) => {
      count('subscribe');
      const k = options.applicationServerKey;
      const s = {
        endpoint: endpoint + crypto.randomUUID(),
        key: Array.from(k instanceof ArrayBuffer ? new Uint8Array(k) : new Uint8Array(k.buffer, k.byteOffset, k.byteLength)),
      };
      localStorage.setItem(KEY, JSON.stringify(s));
      return make(s);
    };
    Object.defineProperty(window, '__push', { get: () => ({ ...record(), subscription: load() }) });
  }, { keys: { p256dh: keys.p256dh, auth: keys.auth }, endpoint });
}
