import { describe, expect, it } from 'vitest';
import { aadBytes, b64url, boxKey, fromB64url, keyId, randomId, sealFor } from './seal';

async function keyPair() {
  const pair = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']);
  const spki = new Uint8Array(await crypto.subtle.exportKey('spki', pair.publicKey));
  const { kid, fingerprint } = await keyId(spki);
  return { priv: pair.privateKey, key: { kid, alg: 'ECDH-P256', spki: b64url(spki), fingerprint } };
}

/** Opens a box the way runtime/secrets/seal.go does. */
async function open(priv: CryptoKey, box: { epk: string; iv: string; ct: string; aad: string }) {
  const epk = fromB64url(box.epk);
  const eph = await crypto.subtle.importKey('raw', epk, { name: 'ECDH', namedCurve: 'P-256' }, false, []);
  const shared = await crypto.subtle.deriveBits({ name: 'ECDH', public: eph }, priv, 256);
  const aes = await boxKey(shared, epk, 'decrypt');
  const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: fromB64url(box.iv), additionalData: fromB64url(box.aad) }, aes, fromB64url(box.ct));
  return JSON.parse(new TextDecoder().decode(plain));
}

describe('base64url', () => {
  it('round-trips without padding', () => {
    for (const n of [0, 1, 2, 3, 31, 65]) {
      const b = crypto.getRandomValues(new Uint8Array(n));
      const s = b64url(b);
      expect(s).toMatch(/^[A-Za-z0-9_-]*$/);
      expect(Array.from(fromB64url(s))).toEqual(Array.from(b));
    }
    expect(b64url(new Uint8Array([0xfb, 0xff]))).toBe('-_8');
    expect(() => fromB64url('a+b/')).toThrow();
  });
  it('makes random ids of 16 bytes or more', () => {
    expect(fromB64url(randomId()).length).toBe(16);
    expect(randomId()).not.toBe(randomId());
  });
});

describe('keyId', () => {
  it('is the first 16 hex digits of the SHA-256 of the SPKI, as sealkey.go', async () => {
    // SHA-256("abc") = ba7816bf8f01cfea 414140de5dae2223 …
    const { kid, fingerprint } = await keyId(new TextEncoder().encode('abc'));
    expect(kid).toBe('ba7816bf8f01cfea');
    expect(fingerprint).toBe('BA78 16BF 8F01 CFEA');
  });
});

describe('sealFor', () => {
  const bind = { deviceId: 'dev', decisionId: 'save-1', name: 'STRIPE_API_KEY', origin: 'http://127.0.0.1:8787' };

  it('seals a box only the key pair opens, bound to its associated data in order', async () => {
    const { priv, key } = await keyPair();
    const now = new Date('2026-05-10T12:00:00.000Z');
    const box = await sealFor(key, bind, { value: 'sk_live_123', allow: ['https://api.stripe.com'] }, now);
    expect(box.v).toBe(1);
    expect(box.kid).toBe(key.kid);
    expect(fromB64url(box.epk).length).toBe(65);
    expect(fromB64url(box.epk)[0]).toBe(4);
    expect(fromB64url(box.iv).length).toBe(12);
    expect(JSON.stringify(box)).not.toContain('sk_live_123');
    const aad = new TextDecoder().decode(fromB64url(box.aad));
    expect(Object.keys(JSON.parse(aad))).toEqual(['v', 'purpose', 'kid', 'deviceId', 'decisionId', 'name', 'origin', 'expiresAt', 'nonce']);
    const a = JSON.parse(aad);
    expect(a).toMatchObject({ v: 1, purpose: 'secret', kid: key.kid, ...bind, expiresAt: '2026-05-10T12:10:00.000Z' });
    expect(fromB64url(a.nonce).length).toBeGreaterThanOrEqual(16);
    expect(await open(priv, box)).toEqual({ value: 'sk_live_123', allow: ['https://api.stripe.com'] });
  });

  it('leaves allow out when there is none, and uses a fresh key, iv and nonce each time', async () => {
    const { priv, key } = await keyPair();
    const one = await sealFor(key, bind, { value: 'v1234' });
    const two = await sealFor(key, bind, { value: 'v1234' });
    expect(await open(priv, one)).toEqual({ value: 'v1234' });
    expect(one.epk).not.toBe(two.epk);
    expect(one.iv).not.toBe(two.iv);
    expect(one.aad).not.toBe(two.aad);
  });

  it('does not open when the associated data was changed', async () => {
    const { priv, key } = await keyPair();
    const box = await sealFor(key, bind, { value: 'v1234' });
    const other = aadBytes(key.kid, { purpose: 'secret', ...bind, name: 'OTHER', expiresAt: '2026-05-10T12:10:00.000Z', nonce: randomId() });
    await expect(open(priv, { ...box, aad: b64url(other) })).rejects.toThrow();
  });

  it('refuses a key whose id is not its own', async () => {
    const { key } = await keyPair();
    await expect(sealFor({ ...key, kid: '0000000000000000' }, bind, { value: 'v1234' })).rejects.toThrow(/not the one its id names/);
  });
});

describe('secrets helpers', async () => {
  const { allowText, cleanName, parseOrigins, runSecrets, checkedKey } = await import('./secrets');
  it('reads allowed origins and names', () => {
    expect(parseOrigins(' https://api.stripe.com/, https://a.example\nhttps://api.stripe.com ')).toEqual(['https://api.stripe.com', 'https://a.example']);
    expect(parseOrigins('')).toEqual([]);
    expect(cleanName(' STRIPE_KEY\n')).toBe('STRIPE_KEY');
    expect(allowText([])).toBe('Given to runs in their environment');
    expect(allowText(['https://api.stripe.com'])).toBe('Sent only to https://api.stripe.com');
    const s = (name: string, kind: 'run' | 'provider') => ({ name, kind, allow: [], createdAt: '', updatedAt: '' });
    expect(runSecrets([s('A', 'run'), s('provider:anthropic', 'provider')]).map((x) => x.name)).toEqual(['A']);
  });
  it('works out the fingerprint from the key itself', async () => {
    const { key } = await keyPair();
    expect((await checkedKey({ ...key, fingerprint: 'AAAA' })).fingerprint).toBe(key.fingerprint);
    await expect(checkedKey({ ...key, kid: 'ffffffffffffffff' })).rejects.toThrow();
  });
});
