import { describe, expect, it } from 'vitest';
import { PageChannel } from './e2e';
import { b64url, fromB64url } from './seal';
import vectorsFile from '../../../runtime/takeover/testdata/e2e_vectors.json';

// The vectors runtime/takeover/e2e_test.go writes: the page must open what the runtime seals, and
// seal what the runtime opens, to the byte.
const vectors = vectorsFile as {
  secret: string;
  takeoverId: string;
  pageToRuntime: { seq: number; plain: string; msg: string }[];
  runtimeToPage: { seq: number; plain: string; msg: string }[];
};

describe('e2e interop with the runtime', () => {
  it('opens the runtime’s messages', async () => {
    const ch = await PageChannel.create(fromB64url(vectors.secret), vectors.takeoverId);
    for (const v of vectors.runtimeToPage) expect(await ch.open(fromB64url(v.msg))).toBe(v.plain);
  });

  it('seals exactly what the runtime opens', async () => {
    const ch = await PageChannel.create(fromB64url(vectors.secret), vectors.takeoverId);
    for (const v of vectors.pageToRuntime) expect(b64url(await ch.seal(v.plain))).toBe(v.msg);
  });

  it('refuses a replay, a reorder and a change', async () => {
    const [first, second] = vectors.runtimeToPage.map((v) => fromB64url(v.msg));
    const ch = await PageChannel.create(fromB64url(vectors.secret), vectors.takeoverId);
    const changed = second.slice();
    changed[changed.length - 1] ^= 1;
    await expect(ch.open(changed)).rejects.toThrow(/does not open/);
    await expect(ch.open(second)).resolves.toContain('end');
    await expect(ch.open(first)).rejects.toThrow(/out of order/);
    await expect(ch.open(second)).rejects.toThrow(/again/);
    const other = await PageChannel.create(fromB64url(vectors.secret), 'tk_another');
    await expect(other.open(first)).rejects.toThrow(/does not open/);
  });
});
