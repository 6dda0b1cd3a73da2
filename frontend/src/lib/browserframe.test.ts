import { describe, expect, it } from 'vitest';
import { browserKey, decodeBrowserFrame, hostOf, tapFraction } from './browserframe';
import { PageChannel } from './e2e';
import { fromB64url } from './seal';
import vectorFile from '../../../runtime/takeover/testdata/jpeg_vector.json';

// The vector runtime/takeover/jpeg_test.go writes: a browser frame sealed by the runtime.
const vector = vectorFile as { secret: string; takeoverId: string; header: Record<string, unknown>; jpeg: string; plain: string; msg: string };

describe('browser frames from the runtime', () => {
  it('opens and reads the runtime’s frame to the byte', async () => {
    const ch = await PageChannel.create(fromB64url(vector.secret), vector.takeoverId);
    const plain = await ch.openBytes(fromB64url(vector.msg));
    expect(Array.from(plain)).toEqual(Array.from(fromB64url(vector.plain)));
    const f = decodeBrowserFrame(plain);
    expect(f?.header).toEqual(vector.header);
    expect(Array.from(f!.jpeg)).toEqual(Array.from(fromB64url(vector.jpeg)));
    expect(f!.jpeg[0]).toBe(0xff); // a JPEG's start of image
    expect(f!.jpeg[1]).toBe(0xd8);
  });

  it('takes JSON and short or changed messages for what they are', () => {
    const te = new TextEncoder();
    expect(decodeBrowserFrame(te.encode('{"t":"end","reason":"stopped"}'))).toBeNull();
    expect(decodeBrowserFrame(new Uint8Array([1, 0, 0]))).toBeNull();
    expect(decodeBrowserFrame(new Uint8Array([1, 0, 0, 1, 0, 123]))).toBeNull(); // a header longer than the message
    const head = te.encode('{"t":"frame","kind":"terminal"}');
    const other = new Uint8Array(5 + head.length);
    other[0] = 1;
    new DataView(other.buffer).setUint32(1, head.length);
    other.set(head, 5);
    expect(decodeBrowserFrame(other)).toBeNull();
  });
});

describe('the owner’s input', () => {
  const box = { left: 100, top: 50, width: 400, height: 250 };
  it.each([
    ['the top left corner', 100, 50, { x: 0, y: 0 }],
    ['the middle', 300, 175, { x: 0.5, y: 0.5 }],
    ['a quarter across, three quarters down', 200, 237.5, { x: 0.25, y: 0.75 }],
    ['the bottom right corner', 500, 300, { x: 1, y: 1 }],
    ['left of the picture', 99, 100, null],
    ['below it', 200, 301, null],
  ])('a tap at %s', (_, x, y, want) => {
    expect(tapFraction(x, y, box)).toEqual(want);
  });

  it('a picture not drawn yet takes no taps', () => {
    expect(tapFraction(0, 0, { left: 0, top: 0, width: 0, height: 0 })).toBeNull();
  });

  const key = (k: string, mods: Partial<KeyboardEvent> = {}) => browserKey({ key: k, ctrlKey: false, altKey: false, metaKey: false, shiftKey: false, ...mods });
  it.each([
    ['a', {}, 'a'],
    ['A', { shiftKey: true }, 'A'],
    ['Enter', {}, 'Enter'],
    ['Tab', { shiftKey: true }, 'Shift+Tab'],
    ['a', { ctrlKey: true }, 'Ctrl+a'],
    [' ', {}, ' '],
    [' ', { ctrlKey: true }, 'Ctrl+Space'],
    ['ArrowDown', {}, 'ArrowDown'],
    ['F5', {}, 'F5'],
    ['é', {}, 'é'],
  ])('the key %j with %j is %j', (k, mods, want) => {
    expect(key(k, mods)).toEqual({ t: 'key', key: want });
  });

  it('leaves modifiers alone and composition to the page', () => {
    expect(key('Shift', { shiftKey: true })).toBeNull();
    expect(key('Dead')).toBeNull();
    expect(browserKey({ key: 'a', ctrlKey: false, altKey: false, metaKey: false, shiftKey: false, isComposing: true })).toBeNull();
  });

  it('names a page by its site', () => {
    expect(hostOf('https://shop.example:8443/cart')).toBe('shop.example:8443');
    expect(hostOf('about:blank')).toBe('about:blank');
  });
});
