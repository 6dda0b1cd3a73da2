// The person's terminal: starting one, and the messages of its WebSocket
// (runtime/api/terminal.go): binary frames of output from the runtime, JSON text messages to it.

import { request } from './api';
import { apiURL } from './session';

export interface TerminalInfo {
  id: string;
  title: string;
  folder: string;
  command?: string;
  cols: number;
  rows: number;
  startedAt: string;
  watchers: number;
}

export const MAX_COLS = 1000;
export const MAX_ROWS = 500;

/** A size the runtime accepts: whole numbers from 1 to its limits. */
export function clampSize(cols: number, rows: number): { cols: number; rows: number } {
  const c = (n: number, max: number) => Math.min(max, Math.max(1, Math.floor(Number.isFinite(n) ? n : 1)));
  return { cols: c(cols, MAX_COLS), rows: c(rows, MAX_ROWS) };
}

export const inputMessage = (data: string): string => JSON.stringify({ type: 'input', data });

export function resizeMessage(cols: number, rows: number): string {
  return JSON.stringify({ type: 'resize', ...clampSize(cols, rows) });
}

/** The WebSocket's address for the page at loc: same host, ws or wss as the page is http or https. */
export function socketURL(loc: Pick<Location, 'protocol' | 'host'>, id: string, cols: number, rows: number): string {
  const scheme = loc.protocol === 'https:' ? 'wss:' : 'ws:';
  const size = clampSize(cols, rows);
  return `${scheme}//${loc.host}${apiURL(`/api/terminals/${encodeURIComponent(id)}/ws`)}?cols=${size.cols}&rows=${size.rows}`;
}

/** The sentence to show when the connection closes: the runtime's reason, else one that fits the code. */
export function closedSentence(code: number, reason: string): string {
  if (reason.trim()) return reason.trim();
  if (code === 1000) return 'The terminal has ended.';
  if (code === 1006) return 'The connection to Ensemble was lost.';
  return `The terminal's connection closed (code ${code}).`;
}

/**
 * Whether a closed connection is worth opening again: the terminal is still there (the connection
 * was lost, or the window fell behind and is told to connect again for the current screen).
 */
export function shouldReconnect(code: number, reason: string): boolean {
  if (/ended/i.test(reason)) return false;
  if (/connect again/i.test(reason)) return true;
  return code === 1001 || code === 1006 || code === 1011 || code === 1012 || code === 1013;
}

export const terminals = {
  start: (body: { folder?: string; login?: string; cols?: number; rows?: number }) =>
    request<TerminalInfo>('POST', '/api/terminals', body),
  list: () => request<{ terminals: TerminalInfo[] }>('GET', '/api/terminals').then((r) => r.terminals ?? []),
  end: (id: string) => request<unknown>('DELETE', `/api/terminals/${encodeURIComponent(id)}`),
};
