// The sealed box of spec 002 §8.7.2: a secret typed in this page is encrypted for the runtime's
// own key (GET /api/secrets/seal-key) before it leaves the page, so no request carries the value in
// the clear, including one that goes through the relay from a phone. WebCrypto only; the format is
// runtime/secrets/seal.go's, byte for byte, and it opens the box.

/** The runtime's public seal key, as GET /api/secrets/seal-key gives it. */
export interface SealKey {
  kid: string;
  alg?: string;
  spki: string;
  fingerprint?: string;
}

/** What a box is bound to; seal.go reads these fields in this order. */
export interface SealAAD {
  purpose?: string;
  deviceId: string;
  decisionId: string;
  name: string;
  origin: string;
  /** RFC 3339; 10 minutes ahead when left out. */
  expiresAt?: string;
  /** At least 16 random bytes in base64url; fresh when left out. */
  nonce?: string;
}

/** The box's plaintext. */
export interface SealPlain {
  value: string;
  allow?: string[];
}

/** A sealed box on the wire; epk, iv, ct and aad base64url without padding. */
export interface SealedBox {
  v: 1;
  kid: string;
  epk: string;
  iv: string;
  ct: string;
  aad: string;
}

export const SEAL_INFO = 'ensemble-seal-v1';
/** How long a box may be opened: the runtime refuses more than 15 minutes ahead. */
export const SEAL_TTL_MS = 10 * 60 * 1000;

const te = new TextEncoder();

/** bytes as base64url without padding. */
export function b64url(bytes: Uint8Array | ArrayBuffer): string {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let s = '';
  for (let i = 0; i < b.length; i++) s += String.fromCharCode(b[i]);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** base64url (with or without padding) as bytes; throws on anything else. */
export function fromB64url(s: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(s)) throw new Error('The key is not base64url.');
  const std = s.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(std + '='.repeat((4 - (std.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** A key's id (the first 16 hex digits of the SHA-256 of its SPKI) and its fingerprint ("7F98 5267 E5FD 5A05"), as sealkey.go's KeyID. */
export async function keyId(spki: Uint8Array<ArrayBuffer>): Promise<{ kid: string; fingerprint: string }> {
  const sum = new Uint8Array(await crypto.subtle.digest('SHA-256', spki));
  const kid = Array.from(sum.slice(0, 8), (b) => b.toString(16).padStart(2, '0')).join('');
  const up = kid.toUpperCase();
  return { kid, fingerprint: `${up.slice(0, 4)} ${up.slice(4, 8)} ${up.slice(8, 12)} ${up.slice(12, 16)}` };
}

/** A random id in base64url: a box's nonce, a save's decisionId. */
export function randomId(bytes = 16): string {
  return b64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** The AES-256-GCM key of a box: HKDF-SHA-256 over the ECDH secret, salt the ephemeral public key. */
export async function boxKey(shared: ArrayBuffer, epk: Uint8Array<ArrayBuffer>, usage: KeyUsage): Promise<CryptoKey> {
  const ikm = await crypto.subtle.importKey('raw', shared, 'HKDF', false, ['deriveKey']);
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: epk, info: te.encode(SEAL_INFO) },
    ikm,
    { name: 'AES-GCM', length: 256 },
    false,
    [usage],
  );
}

/** The associated data's exact bytes: the fields in seal.go's order. */
export function aadBytes(kid: string, a: Required<SealAAD>): Uint8Array<ArrayBuffer> {
  return te.encode(
    JSON.stringify({
      v: 1,
      purpose: a.purpose,
      kid,
      deviceId: a.deviceId,
      decisionId: a.decisionId,
      name: a.name,
      origin: a.origin,
      expiresAt: a.expiresAt,
      nonce: a.nonce,
    }),
  );
}

/**
 * Seals plain for key, bound to aad. The key's id is checked against the SPKI it came with first,
 * so the page only ever encrypts for the key whose fingerprint it shows.
 */
export async function sealFor(key: SealKey, aad: SealAAD, plain: SealPlain, now: Date = new Date()): Promise<SealedBox> {
  const spki = fromB64url(key.spki);
  const { kid } = await keyId(spki);
  if (kid !== key.kid) throw new Error('The key this computer gave is not the one its id names; reload the page.');
  const pub = await crypto.subtle.importKey('spki', spki, { name: 'ECDH', namedCurve: 'P-256' }, false, []);
  const eph = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits']);
  const shared = await crypto.subtle.deriveBits({ name: 'ECDH', public: pub }, eph.privateKey, 256);
  const epk = new Uint8Array(await crypto.subtle.exportKey('raw', eph.publicKey));
  const aes = await boxKey(shared, epk, 'encrypt');
  const full: Required<SealAAD> = {
    purpose: aad.purpose ?? 'secret',
    deviceId: aad.deviceId,
    decisionId: aad.decisionId,
    name: aad.name,
    origin: aad.origin,
    expiresAt: aad.expiresAt ?? new Date(now.getTime() + SEAL_TTL_MS).toISOString(),
    nonce: aad.nonce ?? randomId(24),
  };
  const ad = aadBytes(kid, full);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const body: SealPlain = plain.allow?.length ? { value: plain.value, allow: plain.allow } : { value: plain.value };
  const ct = await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: ad, tagLength: 128 }, aes, te.encode(JSON.stringify(body)));
  return { v: 1, kid, epk: b64url(epk), iv: b64url(iv), ct: b64url(ct), aad: b64url(ad) };
}
