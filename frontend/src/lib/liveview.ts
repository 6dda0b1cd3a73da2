// A node's live terminal or browser tab, as its owner sees it from the live card (spec 002 §8.17):
// the card's data, the takeover routes (runtime/api/takeovers.go), the frames' runs as spans, and
// the keys a keyboard sends as tty and tty-key events. A browser's pictures are browserframe.ts's.

import { request } from './api';
import type { Message } from './node';

/** A live card's data: a text message whose data.type is "live". */
export interface LiveCard {
  type: 'live';
  kind: 'terminal' | 'browser';
  status: 'open' | 'ended';
  liveId: string;
  title: string;
  /** A terminal's. */
  session?: string;
  /** A browser tab's. */
  tab?: string;
  startedAt: string;
  endedAt?: string;
  endedBy?: string;
  endReason?: string;
}

export function liveCardOf(m: Message): LiveCard | null {
  if (m.kind !== 'text' || !m.data || typeof m.data !== 'object') return null;
  const d = m.data as Partial<LiveCard>;
  return d.type === 'live' && (d.session || d.tab) ? (d as LiveCard) : null;
}

/** The card's line under its title: open, or who ended it and why. */
export function liveStatus(c: LiveCard, nodeName: string): string {
  if (c.status === 'open') return 'Live';
  if (c.endReason === 'stopped') return `${nodeName} ended this live view.`;
  if (c.endedBy === 'node') return `Closed by ${nodeName}.`;
  return c.kind === 'browser' ? 'The tab has closed.' : 'The terminal has ended.';
}

export interface Takeover {
  id: string;
  kind: 'terminal' | 'browser';
  mode: 'watch' | 'control';
  liveCardId?: string;
  session?: string;
  /** A browser's: its tab, which browser shows it, the sign-in card it came from. */
  tab?: string;
  browser?: 'tab' | 'clean';
  loginCardId?: string;
  /** A sign-in's view (a login card's, or a run's held tab's, runId). */
  signIn?: boolean;
  runId?: string;
  /** Why it shows the tab and not the clean browser; a sign-in not seen done yet. */
  note?: string;
  endsAt: string;
  maxEndsAt: string;
  ended?: boolean;
  endReason?: string;
}

const path = (id: string) => `/api/node/takeovers/${encodeURIComponent(id)}`;

export const takeoverApi = {
  open: (liveCardId: string) => request<{ takeover: Takeover }>('POST', '/api/node/takeovers', { liveCardId }).then((r) => r.takeover),
  /** A sign-in card's Open the browser: the clean browser at its tab's page, in control. */
  openLogin: (loginCardId: string) => request<{ takeover: Takeover }>('POST', '/api/node/takeovers', { loginCardId }).then((r) => r.takeover),
  /** A run's own sign-in on Needs me: the clean browser at its held tab's page, in control. */
  openRunSignIn: (runId: string, tab: string) => request<{ takeover: Takeover }>('POST', '/api/node/takeovers', { runId, tab }).then((r) => r.takeover),
  /** I'm done (a sign-in is checked at once) or Stop. */
  end: (id: string, done: boolean) => request<{ takeover: Takeover }>('POST', `${path(id)}/end`, { done }).then((r) => r.takeover),
  control: (id: string, on: boolean) => request<{ takeover: Takeover }>('POST', `${path(id)}/control`, { on }).then((r) => r.takeover),
  extend: (id: string) => request<{ takeover: Takeover }>('POST', `${path(id)}/extend`).then((r) => r.takeover),
  stop: (id: string) => request<{ takeover: Takeover }>('DELETE', path(id)).then((r) => r.takeover),
};

/** The sentence for why a view ended. */
export const END_WORDS: Record<string, string> = {
  stopped: 'You stopped watching.',
  live_stopped: 'The node ended this live view.',
  closed: 'The terminal has ended.',
  time: 'The live view’s time ran out.',
  idle: 'The live view ended after a minute without this page.',
  not_started: 'The live view did not start in time.',
  closed_by_node: 'The node closed this tab.',
  sign_in: 'A sign-in took this tab; watch again when it is done.',
  signed_in: 'Signed in.',
};

/** One run of cells that look the same, as the frame carries it. */
export interface Run {
  t: string;
  fg?: string;
  bg?: string;
  b?: boolean;
  i?: boolean;
  u?: boolean;
  dim?: boolean;
}

export interface TerminalFrame {
  t: 'frame';
  kind: 'terminal';
  seq: number;
  cols: number;
  rows: number;
  cursor: { x: number; y: number };
  title: string;
  mode: 'watch' | 'control';
  payload: { rows: Run[][] };
}

/** A span to draw: its text and inline style; cursor marks the cell the cursor is on. */
export interface Span {
  text: string;
  style: string;
  cursor?: boolean;
}

const HEX = /^#[0-9a-f]{6}$/i;

/** A run's inline style; colours that are not #rrggbb are dropped, so a frame cannot inject CSS. */
export function runStyle(r: Run): string {
  const s: string[] = [];
  if (r.fg && HEX.test(r.fg)) s.push(`color:${r.fg}`);
  if (r.bg && HEX.test(r.bg)) s.push(`background:${r.bg}`);
  if (r.b) s.push('font-weight:bold');
  if (r.i) s.push('font-style:italic');
  if (r.u) s.push('text-decoration:underline');
  if (r.dim) s.push('opacity:.6');
  return s.join(';');
}

/**
 * A frame's rows as spans, row by row. The cursor's cell is split out of its run (or added past the
 * row's end, trailing blanks having been dropped) so it can be drawn as a block.
 */
export function frameSpans(f: Pick<TerminalFrame, 'payload' | 'cursor' | 'rows'>): Span[][] {
  const out: Span[][] = [];
  const rows = f.payload?.rows ?? [];
  for (let y = 0; y < Math.max(rows.length, f.rows || 0); y++) {
    const line: Span[] = [];
    let x = 0;
    const wantCursor = f.cursor && f.cursor.y === y ? f.cursor.x : -1;
    let placed = false;
    for (const r of rows[y] ?? []) {
      const chars = Array.from(r.t ?? '');
      const style = runStyle(r);
      if (wantCursor >= x && wantCursor < x + chars.length) {
        const at = wantCursor - x;
        if (at > 0) line.push({ text: chars.slice(0, at).join(''), style });
        line.push({ text: chars[at], style, cursor: true });
        if (at + 1 < chars.length) line.push({ text: chars.slice(at + 1).join(''), style });
        placed = true;
      } else if (chars.length) {
        line.push({ text: chars.join(''), style });
      }
      x += chars.length;
    }
    if (wantCursor >= 0 && !placed) {
      if (wantCursor > x) line.push({ text: ' '.repeat(wantCursor - x), style: '' });
      line.push({ text: ' ', style: '', cursor: true });
    }
    out.push(line);
  }
  return out;
}

/** A keyboard's key as a view's event: characters as tty, the named keys and Ctrl+letter as tty-key; null for keys left to the page. */
export function keyEvent(e: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'altKey' | 'metaKey'>): { t: 'tty'; text: string } | { t: 'tty-key'; key: string } | null {
  if (e.metaKey || e.altKey) return null;
  if (e.ctrlKey) {
    return /^[a-z]$/i.test(e.key) ? { t: 'tty-key', key: `Ctrl+${e.key.toUpperCase()}` } : null;
  }
  const named: Record<string, string> = {
    Enter: 'Enter',
    Backspace: 'Backspace',
    Tab: 'Tab',
    Escape: 'Escape',
    ArrowUp: 'Up',
    ArrowDown: 'Down',
    ArrowLeft: 'Left',
    ArrowRight: 'Right',
    Home: 'Home',
    End: 'End',
    PageUp: 'PageUp',
    PageDown: 'PageDown',
    Delete: 'Delete',
  };
  if (named[e.key]) return { t: 'tty-key', key: named[e.key] };
  if (/^F([1-9]|1[0-2])$/.test(e.key)) return { t: 'tty-key', key: e.key };
  if (Array.from(e.key).length === 1) return { t: 'tty', text: e.key };
  return null;
}
