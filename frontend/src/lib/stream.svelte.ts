// The one live stream, shared. App opens the EventSource on /api/events (lib/live.ts) and feeds
// what it hears here; a part of the page that follows events (a run's trace on the task page)
// subscribes to this instead of opening a second stream that would carry the same events.

import type { LiveState } from './live';
import type { LiveEvent } from './types';

export type Listener = (ev: LiveEvent) => void;

export class SharedStream {
  /** The stream's state, for whatever shows it. */
  state = $state<LiveState>('connecting');
  /**
   * Counts the times the stream missed events it cannot replay (it was opened again after closing
   * for good, or the server said to reset): a follower reads what it shows again when it changes.
   */
  gaps = $state(0);
  #listeners = new Set<Listener>();

  /** Calls fn with every event from now on, until the returned function is called. */
  subscribe(fn: Listener): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  publish(ev: LiveEvent): void {
    for (const fn of this.#listeners) fn(ev);
  }

  gap(): void {
    this.gaps++;
  }
}

/** The page's stream. */
export const liveStream = new SharedStream();
