// A browser tab's live view (spec 002 §8.16.2, §8.17): its frames are pictures, sent as a binary
// plaintext (runtime/takeover/jpeg.go, byte for byte): a tag byte (0x01; every other message is JSON
// and begins with '{'), the header's length (4 bytes, big-endian), the header as UTF-8 JSON, then
// the JPEG. The owner's taps are fractions of the picture; keys go as a keyboard sends them.

export const JPEG_FRAME_TAG = 0x01;

/** A browser frame's header. url has no query. */
export interface JpegHeader {
  t: 'frame';
  kind: 'jpeg';
  seq: number;
  width: number;
  height: number;
  url: string;
  title: string;
  popup?: boolean;
  mode: 'watch' | 'control';
}

export interface JpegFrame {
  header: JpegHeader;
  jpeg: Uint8Array<ArrayBuffer>;
}

const td = new TextDecoder();

/** A decrypted message as a browser frame, or null when it is not one (JSON, or cut short). */
export function decodeBrowserFrame(plain: Uint8Array<ArrayBuffer>): JpegFrame | null {
  if (plain.length < 5 || plain[0] !== JPEG_FRAME_TAG) return null;
  const n = new DataView(plain.buffer, plain.byteOffset, plain.byteLength).getUint32(1, false);
  if (n > 16384 || 5 + n > plain.length) return null;
  let header: JpegHeader;
  try {
    header = JSON.parse(td.decode(plain.subarray(5, 5 + n)));
  } catch {
    return null;
  }
  if (header?.t !== 'frame' || header.kind !== 'jpeg') return null;
  return { header, jpeg: plain.slice(5 + n) };
}

/** A page's site, for the bar above the picture. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** Where a pointer is on the picture, as fractions 0..1 of its width and height; null outside it. */
export function tapFraction(clientX: number, clientY: number, box: Box): { x: number; y: number } | null {
  if (box.width <= 0 || box.height <= 0) return null;
  const x = (clientX - box.left) / box.width;
  const y = (clientY - box.top) / box.height;
  if (x < 0 || y < 0 || x > 1 || y > 1) return null;
  const round = (f: number) => Math.round(f * 10000) / 10000;
  return { x: round(x), y: round(y) };
}

export type BrowserEvent =
  | { t: 'tap' | 'down' | 'up' | 'move'; x: number; y: number }
  | { t: 'wheel'; x: number; y: number; dx: number; dy: number }
  | { t: 'key'; key: string }
  | { t: 'text'; text: string };

const NAMED = new Set(['Enter', 'Tab', 'Backspace', 'Escape', 'Delete', 'Insert', 'Home', 'End', 'PageUp', 'PageDown', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight']);

/**
 * A keyboard's key as the view sends it: one character or a named key, with Ctrl+, Alt+, Meta+
 * (and Shift+ for a named key: a character already says its shift); null for what is left to the
 * page (a modifier alone, dead keys, IME composition).
 */
export function browserKey(e: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'altKey' | 'metaKey' | 'shiftKey'> & { isComposing?: boolean }): { t: 'key'; key: string } | null {
  if (e.isComposing) return null;
  const named = NAMED.has(e.key) || /^F([1-9]|1[0-2])$/.test(e.key);
  const char = Array.from(e.key).length === 1;
  if (!named && !char) return null;
  let mods = '';
  if (e.ctrlKey) mods += 'Ctrl+';
  if (e.altKey) mods += 'Alt+';
  if (e.metaKey) mods += 'Meta+';
  if (e.shiftKey && named) mods += 'Shift+';
  return { t: 'key', key: mods + (e.key === ' ' && mods ? 'Space' : e.key) };
}
