// The live stream: one EventSource on /api/events.
//
// EventSource reconnects by itself (sending Last-Event-ID, so the server replays what was
// missed). Only when it gives up for good (readyState CLOSED, e.g. the server answered an
// error status) do we open a new one after a pause, and tell the caller to reload, since a
// fresh EventSource carries no Last-Event-ID. A "reset" event (the client had seen events the
// log does not hold, as after a restore from backup) asks the caller to reload too.

import { TASK_EVENT_KINDS } from './board';
import { FAMILIES, RESET } from './events.gen';
import type { LiveEvent } from './types';
import { apiURL } from './session';

export type LiveState = 'connecting' | 'live' | 'reconnecting';

export interface LiveOptions {
  url?: string;
  /**
   * The first stream replays the events after this sequence number (the oldest of the lists the
   * caller read first), so nothing between those reads and the stream is missed. A stream opened
   * again after a restart starts from now: the caller reads its lists again (onRestart).
   */
  since?: number;
  kinds?: readonly string[];
  /** Ask the server for these kinds only (?kinds=), rather than listening to them among all. */
  filter?: boolean;
  onEvent: (ev: LiveEvent) => void;
  onState: (s: LiveState) => void;
  /** A new stream was opened after the old one closed for good: the caller should reload. */
  onRestart?: () => void;
  /**
   * The server said to reset: this client resumed from an event the log never reached (the data
   * folder was restored or replaced), so what it holds may be stale. onRestart when not given.
   */
  onReset?: () => void;
  /** The stream closed for good (the server answered an error, which EventSource does not say):
   * the caller can ask the API why, a 401 meaning it was signed out. */
  onClosed?: () => void;
  /** For tests. */
  EventSource?: typeof EventSource;
  retryMs?: (attempt: number) => number;
}

/** The event the server sends first to a client that resumed from past the newest event. */
export const RESET_EVENT = RESET;

/**
 * The kinds as the stream's ?kinds= filter: a family ("run.") where every kind of it is asked for,
 * the kind itself otherwise.
 */
export function kindsFilter(kinds: readonly string[]): string {
  const want = new Set(kinds);
  const covered = new Set<string>();
  const out: string[] = [];
  for (const [family, ks] of Object.entries(FAMILIES)) {
    if (!ks.every((k) => want.has(k))) continue;
    out.push(`${family}.`);
    for (const k of ks) covered.add(k);
  }
  for (const k of want) if (!covered.has(k) && k !== RESET) out.push(k);
  return out.join(',');
}

export function backoff(attempt: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5));
}

export function connectLive(opts: LiveOptions): { close: () => void } {
  const ES = opts.EventSource ?? EventSource;
  const kinds = opts.kinds ?? TASK_EVENT_KINDS;
  const url = opts.filter ? `${opts.url ?? '/api/events'}?kinds=${kindsFilter(kinds)}` : (opts.url ?? '/api/events');
  const retry = opts.retryMs ?? backoff;
  let es: EventSource | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let attempt = 0;
  let closed = false;

  const open = (restart: boolean) => {
    opts.onState(restart ? 'reconnecting' : 'connecting');
    const from = !restart && opts.since !== undefined && opts.since >= 0 ? opts.since : -1;
    const src = new ES(apiURL(from >= 0 ? `${url}${url.includes('?') ? '&' : '?'}since=${from}` : url), { withCredentials: true });
    es = src;
    src.onopen = () => {
      attempt = 0;
      opts.onState('live');
      if (restart) {
        restart = false;
        opts.onRestart?.();
      }
    };
    src.onerror = () => {
      if (closed || es !== src) return;
      if (src.readyState === ES.CLOSED) {
        src.close();
        opts.onState('reconnecting');
        opts.onClosed?.();
        timer = setTimeout(() => open(true), retry(attempt++));
      } else {
        opts.onState('reconnecting');
      }
    };
    src.addEventListener(RESET_EVENT, () => {
      if (closed || es !== src) return;
      (opts.onReset ?? opts.onRestart)?.();
    });
    for (const kind of kinds) {
      src.addEventListener(kind, (e) => {
        let data: unknown;
        try {
          data = JSON.parse((e as MessageEvent).data);
        } catch {
          return;
        }
        const seq = Number((e as MessageEvent).lastEventId);
        opts.onEvent(Number.isFinite(seq) && seq > 0 ? { kind, data, seq } : { kind, data });
      });
    }
  };

  open(false);
  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      es?.close();
    },
  };
}
