// The end-to-end encryption of a live view (runtime/takeover/e2e.go, byte for byte): the page makes
// a random 32-byte secret, seals it for this computer's key (seal.ts, purpose "takeover"), and both
// sides derive one AES-256-GCM key per direction with HKDF-SHA-256 (salt: the takeover's id; info:
// the direction). Each message is a 12-byte IV (four zero bytes, then its sequence number as 64
// bits big-endian, which is also the additional data) and the ciphertext with its tag. Numbers rise
// from 1 in each direction; a message whose number is not above the last one taken is refused, so
// a relay in between can drop or delay messages but not replay, reorder or change them.

export const INFO_PAGE_TO_RUNTIME = 'ensemble-takeover-v1 page→runtime';
export const INFO_RUNTIME_TO_PAGE = 'ensemble-takeover-v1 runtime→page';
export const SECRET_SIZE = 32;

const te = new TextEncoder();
const td = new TextDecoder();

/** One direction's AES-GCM key from the secret and the takeover's id. */
export async function deriveKey(secret: Uint8Array<ArrayBuffer>, takeoverId: string, info: string, usage: KeyUsage): Promise<CryptoKey> {
  const ikm = await crypto.subtle.importKey('raw', secret, 'HKDF', false, ['deriveKey']);
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: te.encode(takeoverId), info: te.encode(info) },
    ikm,
    { name: 'AES-GCM', length: 256 },
    false,
    [usage],
  );
}

function ivOf(seq: bigint): Uint8Array<ArrayBuffer> {
  const iv = new Uint8Array(12);
  new DataView(iv.buffer).setBigUint64(4, seq, false);
  return iv;
}

/** The page's side of a takeover: it seals page→runtime and opens runtime→page. */
export class PageChannel {
  private sent = 0n;
  private took = 0n;
  private constructor(
    private readonly sendKey: CryptoKey,
    private readonly recvKey: CryptoKey,
  ) {}

  static async create(secret: Uint8Array<ArrayBuffer>, takeoverId: string): Promise<PageChannel> {
    if (secret.length !== SECRET_SIZE) throw new Error(`The secret is ${secret.length} bytes, not ${SECRET_SIZE}.`);
    return new PageChannel(
      await deriveKey(secret, takeoverId, INFO_PAGE_TO_RUNTIME, 'encrypt'),
      await deriveKey(secret, takeoverId, INFO_RUNTIME_TO_PAGE, 'decrypt'),
    );
  }

  /** The next message to the runtime, holding text. Calls are numbered in the order they are made. */
  async seal(text: string): Promise<Uint8Array<ArrayBuffer>> {
    this.sent += 1n;
    const iv = ivOf(this.sent);
    const ct = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: iv, tagLength: 128 }, this.sendKey, te.encode(text)));
    const out = new Uint8Array(12 + ct.length);
    out.set(iv);
    out.set(ct, 12);
    return out;
  }

  /** A message from the runtime as text; throws for one replayed, out of order, or changed. */
  async open(msg: Uint8Array<ArrayBuffer>): Promise<string> {
    return td.decode(await this.openBytes(msg));
  }

  /** A message from the runtime as bytes (a browser's frame is binary); throws as open does. */
  async openBytes(msg: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
    if (msg.length < 28 || msg[0] | msg[1] | msg[2] | msg[3]) throw new Error('The message does not open with this takeover’s key.');
    const iv = msg.slice(0, 12);
    const seq = new DataView(iv.buffer).getBigUint64(4, false);
    if (seq <= this.took) throw new Error('A message came again or out of order.');
    let plain: ArrayBuffer;
    try {
      plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv, additionalData: iv, tagLength: 128 }, this.recvKey, msg.slice(12));
    } catch {
      throw new Error('The message does not open with this takeover’s key.');
    }
    this.took = seq;
    return new Uint8Array(plain);
  }
}

/** A fresh random secret for a takeover. */
export function newSecret(): Uint8Array<ArrayBuffer> {
  return crypto.getRandomValues(new Uint8Array(SECRET_SIZE));
}
